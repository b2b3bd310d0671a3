// critpath — tests/unit/analyzer/engine/header_lines_test.cpp: the Nodes and Clock header lines
// (engine/header_lines.h) leave out what the trace does not give, or name it unknown; never
// "on 0 cores", never an empty field.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "analyzer/engine/header_lines.h"

using namespace critpath::analyzer;
using engine::NodeCount;

TEST_CASE("Nodes: hosts and core counts as recorded", "[engine][header]") {
  CHECK(engine::nodes_line({{"vm", 4, 2}}) == "@ Nodes           : 1 node: vm 4 ranks on 2 cores");
  CHECK(engine::nodes_line({{"a", 1, 1}, {"b", 2, 8}}) ==
        "@ Nodes           : 2 nodes: a 1 rank on 1 core; b 2 ranks on 8 cores");
  const std::vector<NodeCount> five = {{"a", 1, 1}, {"b", 1, 1}, {"c", 1, 1}, {"d", 1, 1}, {"e", 1, 1}};
  CHECK(engine::nodes_line(five) ==
        "@ Nodes           : 5 nodes: a 1 rank on 1 core; b 1 rank on 1 core; c 1 rank on 1 core; "
        "d 1 rank on 1 core; ...");
}

TEST_CASE("Nodes: an unknown core count or host is left out, never 0", "[engine][header]") {
  // An OTF2 archive names its host but gives no affinity.
  CHECK(engine::nodes_line({{"zih", 4, 0}}) == "@ Nodes           : 1 node: zih 4 ranks");
  // No host names at all.
  CHECK(engine::nodes_line({{"", 4, 0}}) ==
        "@ Nodes           : unknown (the trace names no host for its 4 ranks)");
  CHECK(engine::nodes_line({{"", 1, 2}}) ==
        "@ Nodes           : unknown (the trace names no host for its 1 rank)");
  // Some named, some not: the named ones counted, the rest said in words.
  CHECK(engine::nodes_line({{"", 2, 0}, {"a", 2, 4}}) ==
        "@ Nodes           : 1 node: a 2 ranks on 4 cores; 2 ranks on hosts the trace does not name");
  for (const std::string& line : {engine::nodes_line({{"zih", 4, 0}}), engine::nodes_line({{"", 3, 0}})}) {
    CHECK(line.find(" 0 core") == std::string::npos);
    CHECK(line.find(":  ") == std::string::npos);
  }
}

TEST_CASE("Clock: how the times were put on one base, the error bound unknown for an import",
          "[engine][header]") {
  RunInfo run;
  run.size = 4;
  run.clock_linear = true;
  run.all_on_one_host = true;
  CHECK(engine::clock_line(run, 0, 0, 0) ==
        "@ Clock           : one host: CLOCK_MONOTONIC shared, no correction needed; max error 0.0 us; "
        "clock-condition violations: 0 p2p, 0 collective");
  run.all_on_one_host = false;
  CHECK(
      engine::clock_line(run, 2.5e-6, 1, 2) ==
      "@ Clock           : linear correction to rank 0; max error 2.5 us; clock-condition violations: 1 p2p, "
      "2 collective");
  run.clock_linear = false;
  CHECK(engine::clock_line(run, 0, 0, 0).find(": no correction; max error 0.0 us;") != std::string::npos);
  // An OTF2 archive: its writer put the time stamps on one base; the error is not known.
  run.imported_from = "OTF2 archive";
  CHECK(engine::clock_line(run, 0, 0, 3) ==
        "@ Clock           : as the archive's writer left the time stamps; max error unknown; "
        "clock-condition violations: 0 p2p, 3 collective");
}

TEST_CASE("Replay: no per-message figures without messages", "[engine][header]") {
  CHECK(engine::replay_line(4, 48, 400, 0) ==
        "@ Replay          : 4 messages, 12.0 B per message to match them, 100.0 B per message in all "
        "(collectives, one-sided notes and the delay analysis included), 0 unmatched");
  CHECK(engine::replay_line(0, 0, 1200, 0) == "@ Replay          : 0 messages, 0 unmatched");
  CHECK(engine::replay_line(0, 0, 0, 2) == "@ Replay          : 0 messages, 2 unmatched");
}
