// critpath — tests/unit/analyzer/passes/critical_path/critical_path_test.cpp: the wait records
// the critical-path walk reads in place (cp_records: MPI_Init's record held apart) and the busy
// intervals (analyzer/passes/critical_path/critical_path.h), on small synthetic timelines.
#include "analyzer/passes/critical_path/critical_path.h"

#include <catch2/catch.hpp>

#include <utility>
#include <vector>

using namespace critpath::analyzer;
using namespace critpath::analyzer::passes;

namespace {

engine::CallRecord call(double enter, double exit) { return engine::CallRecord{enter, exit, 0, 0, 0}; }

WaitRecord wait(uint32_t c, double wait_end, double completion_begin, int32_t cause_rank, double cause_time) {
  return WaitRecord{c, cause_rank, wait_end, completion_begin, cause_time};
}

std::vector<WaitRecord> listed(const CpRecords& records) {
  std::vector<WaitRecord> out;
  records.for_each([&](const WaitRecord& r) { out.push_back(r); });
  return out;
}

}  // namespace

TEST_CASE("cp_records puts MPI_Init's wait in, or changes its record, in call order", "[passes]") {
  engine::Timeline t;
  t.calls = {call(0, 5), call(6, 9), call(10, 11)};
  t.init_call = 0;
  WaitStates ws;
  ws.records = {wait(1, 8, 9, 1, 8)};
  RunBounds b;
  b.last_init_enter = 3;
  b.last_init_rank = 2;
  const CpRecords put = cp_records(t, ws, b);
  const std::vector<WaitRecord> v = listed(put);
  REQUIRE(v.size() == 2);
  CHECK(put.size() == 2);
  CHECK(v[0].call == 0);
  CHECK(v[0].wait_end == 3);
  CHECK(v[0].cause_rank == 2);
  CHECK(v[0].cause_time == 3);
  CHECK(v[0].completion_begin == 5);
  CHECK(v[1].call == 1);
  CHECK(ws.records.size() == 1);  // read in place, never copied or changed

  ws.records = {wait(0, 1, 4, -1, 0), wait(1, 8, 9, 1, 8)};
  const std::vector<WaitRecord> w = listed(cp_records(t, ws, b));
  REQUIRE(w.size() == 2);
  CHECK(w[0].wait_end == 3);
  CHECK(w[0].completion_begin == 4);
  CHECK(w[0].cause_rank == 2);
  CHECK(ws.records[0].wait_end == 1);

  b.last_init_enter = 0;  // this rank entered MPI_Init last: no wait there
  const CpRecords none = cp_records(t, ws, b);
  CHECK_FALSE(none.has_init);
  CHECK(listed(none).size() == 2);
}

TEST_CASE("busy intervals: the span less the waits, ascending or not", "[passes]") {
  engine::Timeline t;
  WaitStates ws;
  RunBounds b;  // no MPI_Init call: the records as they are
  using Iv = std::vector<std::pair<double, double>>;
  t.calls = {call(1, 3), call(4, 6)};
  ws.records = {wait(0, 2, 3, 1, 2), wait(1, 4, 5, 1, 4)};
  CHECK(busy_intervals(t, cp_records(t, ws, b), 0, 12) == Iv{{0, 1}, {2, 5}, {6, 12}});
  // A call nested in an earlier one's completion wait: its waits come after, out of order.
  t.calls = {call(1, 10), call(5, 7)};
  ws.records = {wait(0, 4, 8, 1, 4), wait(1, 6, 7, 1, 6)};
  CHECK(busy_intervals(t, cp_records(t, ws, b), 0, 12) == Iv{{0, 1}, {4, 5}, {6, 8}, {10, 12}});
}
