// critpath — tests/unit/analyzer/passes/pass_engine_test.cpp: passes driven as the engine drives
// them (engine/pass.h), on engine::Group::local() without MPI: the rma pass's one-sided result
// and the wait-state pass composing it into its own, through the typed results
// (engine/results.h); and the results store itself.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "analyzer/engine/group.h"
#include "analyzer/engine/pass.h"
#include "analyzer/engine/results.h"
#include "analyzer/passes/pass.h"
#include "analyzer/passes/pass_list.h"
#include "analyzer/passes/rma/rma.h"
#include "analyzer/passes/wait_states/wait_states.h"
#include "libtrace/config/config.h"
#include "libtrace/defs/definitions.h"

// A namespace of this file's own: the unit tests build several files as one (unity build,
// tests/CMakeLists.txt), and its helpers share names with other files'.
namespace pass_engine_test {

using namespace critpath;
using namespace critpath::analyzer;

namespace {

struct Widget {
  int value = 0;
};
inline constexpr engine::ResultKey<Widget> kWidget{"widget"};
inline constexpr engine::ResultKey<std::vector<int>> kNumbers{"numbers"};

constexpr uint32_t kRecv = 1990, kInit = 1995, kFinalize = 1996;

defs::Definitions& pass_defs() {
  static defs::Definitions* d = [] {
    auto* defs = new defs::Definitions;
    defs::MpiSemantics s;
    s.cls = defs::MpiClass::kP2p;
    defs->regions.define_fixed(kRecv, "MPI_Recv", defs::RegionKind::kMpi, s);
    s.cls = defs::MpiClass::kManagement;
    s.lifecycle = defs::MpiLifecycle::kInit;
    defs->regions.define_fixed(kInit, "MPI_Init", defs::RegionKind::kMpi, s);
    s.lifecycle = defs::MpiLifecycle::kFinalize;
    defs->regions.define_fixed(kFinalize, "MPI_Finalize", defs::RegionKind::kMpi, s);
    return defs;
  }();
  return *d;
}

Pass* find(std::vector<std::unique_ptr<Pass>>& passes, const char* name) {
  for (auto& p : passes)
    if (std::string(p->name()) == name) return p.get();
  return nullptr;
}

}  // namespace

TEST_CASE("results: typed keys, publish, find, withdraw", "[results]") {
  engine::Results r;
  CHECK(r.find(kWidget) == nullptr);
  CHECK_FALSE(r.has("widget"));
  r.publish(kWidget, Widget{3});
  REQUIRE(r.find(kWidget) != nullptr);
  CHECK(r.find(kWidget)->value == 3);
  CHECK(r.has("widget"));
  CHECK(r.find(kNumbers) == nullptr);  // another key, another type
  r.publish(kNumbers, std::vector<int>{1, 2});
  // Window by window: the producer takes its result back and publishes the extended one.
  std::vector<int> n = r.withdraw(kNumbers);
  CHECK(n.size() == 2);
  CHECK(r.find(kNumbers) == nullptr);
  n.push_back(3);
  r.publish(kNumbers, std::move(n));
  CHECK(r.find(kNumbers)->size() == 3);
  r.publish(kWidget, Widget{4});  // a new window's result replaces the previous one
  CHECK(r.find(kWidget)->value == 4);
}

TEST_CASE("pass list: needs name passes of the list, every row has a pass, the engine reads the list",
          "[results]") {
  config::Config cfg;
  auto passes = passes::make_passes(cfg);
  for (const PassInfo& row : passes::pass_list()) {
    for (const char* need : row.needs) CHECK(engine::find_pass(need) != nullptr);
    CHECK(find(passes, row.name) != nullptr);
  }
  CHECK(engine::pass_table().size() == passes::pass_list().size());
  CHECK(engine::find_pass("profile") == nullptr);  // the engine's own traversal is no pass
  REQUIRE(engine::find_pass("wait_states") != nullptr);
  const std::vector<const char*>& needs = engine::find_pass("wait_states")->needs;
  REQUIRE(needs.size() == 1);
  CHECK(std::string(needs[0]) == "rma");
}

TEST_CASE("passes end to end on Group::local(): rma, then wait states composing its result", "[results]") {
  config::Config cfg;
  auto passes = passes::make_passes(cfg);
  Pass* rma = find(passes, "rma");
  Pass* waits = find(passes, "wait_states");
  REQUIRE(rma != nullptr);
  REQUIRE(waits != nullptr);
  // One rank: MPI_Init, a receive that waited 0.25 s for a send from rank 1 (its enter known
  // from the exchange), MPI_Finalize.
  engine::Timeline t;
  auto call = [&](uint32_t region, double enter, double exit) {
    engine::CallRecord c;
    c.region = region;
    c.enter = enter;
    c.exit = exit;
    c.node = int32_t(t.calls.size());
    t.calls.push_back(c);
    return uint32_t(t.calls.size() - 1);
  };
  t.init_call = call(kInit, 0.0, 0.1);
  const uint32_t recv = call(kRecv, 1.0, 1.5);
  t.finalize_call = call(kFinalize, 2.0, 2.1);
  engine::RecvRecord r;
  r.peer = 1;
  r.post_call = r.complete_call = recv;
  t.recvs.push_back(r);
  engine::P2pMatch m;
  m.send_enter.push_back(1.25);
  m.send_group.push_back(0);
  m.send_pos.push_back(0);
  const std::vector<engine::CollSync> none;
  const std::vector<uint32_t> no_windows;

  RunInfo run;
  engine::Results results;
  const std::function<double(uint64_t)> to_global = [](uint64_t ticks) { return double(ticks) * 1e-9; };
  const std::function<void(const std::string&)> warn = [](const std::string&) {};
  const PassContext ctx{run, pass_defs(), to_global, results, warn};
  const WindowContext wc{t, m,  none, none, no_windows, t.calls.size(), -1,     true,
                         0, -1, 0.0,  0.1,  2.0,        nullptr,        nullptr};
  const engine::Group group = engine::Group::local();
  REQUIRE(rma->analyze(ctx, wc, group) == Status::kOk);
  const passes::RmaResult* one_sided = results.find(passes::kRma);
  REQUIRE(one_sided != nullptr);
  CHECK(one_sided->epochs == 0);
  CHECK(one_sided->one_sided.records.empty());
  REQUIRE(waits->analyze(ctx, wc, group) == Status::kOk);
  const passes::WaitStates* ws = results.find(passes::kWaitStates);
  REQUIRE(ws != nullptr);
  REQUIRE(ws->by_node.size() == t.calls.size());
  CHECK(ws->by_node[recv][passes::kLateSender] == Approx(0.25));
  CHECK(ws->stats[passes::kLateSender].count == 1);
  REQUIRE(ws->records.size() == 1);
  CHECK(ws->records[0].call == recv);
  CHECK(ws->records[0].cause_rank == 1);
  // The wait-state pass's columns of the rank's statistics.
  std::vector<double> row(kStatCount, 0.0);
  waits->add_rank_stats(ctx, row);
  CHECK(row[kStatP2pViolations] == 0.0);
}

}  // namespace pass_engine_test
