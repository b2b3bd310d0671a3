// critpath — tests/unit/hooks/hooks_test.cpp: the -finstrument-functions hooks without MPI
// and without a compiler: the test calls __cyg_profile_func_enter/exit itself with addresses
// of functions in this file, into a trace buffer it owns, and reads the slots back.
#include <catch2/catch.hpp>

#include <chrono>

#include <unistd.h>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "compiler_hooks/counters.h"
#include "compiler_hooks/hooks.h"
#include "compiler_hooks/symbols.h"
#include "libtrace/buffer/codec.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/recorder.h"

extern "C" void __cyg_profile_func_enter(void* fn, void* site);
extern "C" void __cyg_profile_func_exit(void* fn, void* site);

extern "C" __attribute__((noinline)) int cp_test_a(int x) { return x + 1; }
extern "C" __attribute__((noinline)) int cp_test_b(int x) { return x + 2; }
extern "C" __attribute__((noinline)) int cp_test_c(int x) { return x + 3; }
extern "C" __attribute__((noinline)) int cp_test_pre(int x) { return x + 4; }

namespace cp_ns {
template <typename T>
__attribute__((noinline)) T twice(T v) {
  return v + v;
}
template int twice<int>(int);
}  // namespace cp_ns

using namespace critpath;
using trace::EventKind;

namespace {

void* A = reinterpret_cast<void*>(&cp_test_a);
void* B = reinterpret_cast<void*>(&cp_test_b);
void* C = reinterpret_cast<void*>(&cp_test_c);
void* PRE = reinterpret_cast<void*>(&cp_test_pre);

void enter(void* f) { __cyg_profile_func_enter(f, nullptr); }
void leave(void* f) { __cyg_profile_func_exit(f, nullptr); }

// Points this thread's recorder state at a private buffer (no recorder, no compressor) and
// restores everything on destruction.
struct Recording {
  std::vector<trace::Slot> buf = std::vector<trace::Slot>(1 << 16);
  runtime::ThreadState saved = runtime::t_state;
  uint8_t saved_phase = runtime::g_phase.load();
  explicit Recording(runtime::Phase phase = runtime::Phase::kRecording) {
    runtime::ThreadState& t = runtime::t_state;
    t.base = t.pos = buf.data();
    t.limit = buf.data() + buf.size() - 64;
    t.state = 1;
    runtime::g_phase.store(uint8_t(phase));
  }
  ~Recording() {
    runtime::t_state = saved;
    runtime::g_phase.store(saved_phase);
  }
  static void phase(runtime::Phase p) { runtime::g_phase.store(uint8_t(p)); }
  std::vector<trace::Event> events() const {
    std::vector<trace::Event> out;
    REQUIRE(trace::slots_to_events(buf.data(), runtime::t_state.pos, out) == Status::kOk);
    return out;
  }
};

hooks::Options no_autofilter() {
  hooks::Options o;
  o.autofilter_ns = 0;
  return o;
}

std::string name_of(uint32_t region) { return defs::regions().get(region).name; }

uint32_t region_of(void* fn) {
  for (const auto& f : hooks::function_table())
    if (f.address == reinterpret_cast<uintptr_t>(fn)) return f.region;
  return 0;
}

}  // namespace

TEST_CASE("hooks: frames from before recording are entered at its start; names at stop", "[hooks]") {
  hooks::reset_for_testing();
  REQUIRE(hooks::configure(no_autofilter()) == Status::kOk);
  Recording rec(runtime::Phase::kPreInit);
  enter(PRE);  // before MPI_Init: tracked, not recorded
  CHECK(rec.events().empty());
  Recording::phase(runtime::Phase::kRecording);
  hooks::recording_started();  // what MPI_Init's listener does
  enter(A);
  enter(B);
  leave(B);
  leave(C);  // an exit whose enter was never seen: ignored
  leave(A);
  leave(PRE);
  CHECK(hooks::shadow_depth() == 0);
  const auto ev = rec.events();
  const uint32_t pre = region_of(PRE), a = region_of(A), b = region_of(B);
  REQUIRE(ev.size() == 6);
  const std::vector<std::pair<EventKind, uint32_t>> want = {
      {EventKind::kEnter, pre}, {EventKind::kEnter, a}, {EventKind::kEnter, b},
      {EventKind::kExit, b},    {EventKind::kExit, a},  {EventKind::kExit, pre}};
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(ev[i].kind == want[i].first);
    CHECK(ev[i].region == want[i].second);
  }
  // Placeholders until the stop, then symbol names with file and line (debug info).
  CHECK(name_of(a).rfind("0x", 0) == 0);
  hooks::recording_stopped();
  CHECK(name_of(a) == "cp_test_a");
  CHECK(name_of(b) == "cp_test_b");
  CHECK(name_of(pre) == "cp_test_pre");
  const defs::RegionDef d = defs::regions().get(a);
  CHECK(d.kind == defs::RegionKind::kFunction);
#ifdef CRITPATH_TEST_HAVE_LIBDW
  CHECK(d.file.find("hooks_test.cpp") != std::string::npos);
  CHECK(d.line > 0);
#endif
}

TEST_CASE("hooks: an exit that skips frames (longjmp) closes them; pauses stay balanced", "[hooks]") {
  hooks::reset_for_testing();
  REQUIRE(hooks::configure(no_autofilter()) == Status::kOk);
  Recording rec;
  enter(A);
  enter(B);
  enter(C);
  leave(A);  // B and C were left by a longjmp
  CHECK(hooks::shadow_depth() == 0);
  auto ev = rec.events();
  REQUIRE(ev.size() == 6);
  CHECK(ev[3].kind == EventKind::kExit);
  CHECK(ev[3].region == region_of(C));
  CHECK(ev[4].region == region_of(B));
  CHECK(ev[5].region == region_of(A));

  // Entered while paused: never recorded, its exit neither.
  enter(A);
  Recording::phase(runtime::Phase::kPaused);
  enter(B);
  Recording::phase(runtime::Phase::kRecording);
  leave(B);
  leave(A);
  // Entered while recording, left after MPI_Finalize: no EXIT (the profile closes it).
  enter(C);
  Recording::phase(runtime::Phase::kFinalizing);
  leave(C);
  CHECK(hooks::shadow_depth() == 0);
  ev = rec.events();
  REQUIRE(ev.size() == 6 + 3);
  CHECK((ev[6].kind == EventKind::kEnter && ev[6].region == region_of(A)));
  CHECK((ev[7].kind == EventKind::kExit && ev[7].region == region_of(A)));
  CHECK((ev[8].kind == EventKind::kEnter && ev[8].region == region_of(C)));
}

TEST_CASE("hooks: the filter file is applied on first visit and cached", "[hooks]") {
  hooks::reset_for_testing();
  const std::string path = "/tmp/critpath-unit-filter." + std::to_string(getpid());
  FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f);
  std::fputs("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE cp_test_b\nSCOREP_REGION_NAMES_END\n", f);
  std::fclose(f);
  hooks::Options o = no_autofilter();
  o.filter_file = path;
  REQUIRE(hooks::configure(o) == Status::kOk);
  Recording rec;
  for (int i = 0; i < 3; ++i) {
    enter(A);
    enter(B);
    leave(B);
    leave(A);
  }
  const auto ev = rec.events();
  REQUIRE(ev.size() == 6);
  for (const auto& e : ev) CHECK(e.region == region_of(A));
  CHECK(name_of(region_of(A)) == "cp_test_a");  // resolved at first visit (the filter needs it)
  bool b_filtered = false;
  for (const auto& fe : hooks::function_table())
    if (fe.address == reinterpret_cast<uintptr_t>(B)) b_filtered = fe.filtered && fe.region == 0;
  CHECK(b_filtered);
  std::remove(path.c_str());
  hooks::reset_for_testing();
  std::string err;
  o.filter_file = "/nonexistent/filter";
  CHECK(hooks::configure(o, &err) == Status::kIoError);
  CHECK(err.find("cannot read") != std::string::npos);
}

TEST_CASE("hooks: the automatic filter stops recording a short function but counts it", "[hooks]") {
  hooks::reset_for_testing();
  hooks::Options o;
  o.autofilter_visits = 10;
  o.autofilter_ns = 1000000;  // 1 ms: everything here is "short"
  REQUIRE(hooks::configure(o) == Status::kOk);
  Recording rec;
  enter(A);
  for (int i = 0; i < 25; ++i) {
    enter(B);
    // ~2 µs per visit: well above the clock-read overhead the estimate subtracts, so the
    // sampled visit yields time (an empty visit may legitimately estimate to 0 ticks).
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(2);
    while (std::chrono::steady_clock::now() < until) {
    }
    leave(B);
  }
  leave(A);
  const auto ev = rec.events();
  // A: 2 events; B: its first 10 visits only.
  REQUIRE(ev.size() == 2 + 20);
  const uint32_t b = region_of(B);
  hooks::FunctionEntry fb;
  for (const auto& fe : hooks::function_table())
    if (fe.address == reinterpret_cast<uintptr_t>(B)) fb = fe;
  CHECK(fb.auto_filtered);
  CHECK(fb.unrecorded_visits == 15);
  hooks::recording_stopped();
  const defs::RegionDef d = defs::regions().get(b);
  CHECK(d.auto_filtered);
  CHECK(d.unrecorded_visits == 15);
  CHECK(d.unrecorded_ticks > 0);
  // A (2 visits) is not judged yet: still recorded.
  for (const auto& fe : hooks::function_table())
    if (fe.address == reinterpret_cast<uintptr_t>(A)) CHECK_FALSE(fe.auto_filtered);
}

namespace {
uint64_t g_fake = 0;
bool fake_read(uint64_t* v) {
  ++g_fake;
  v[0] = g_fake * 10;
  v[1] = g_fake * 100;
  v[2] = 7;
  return true;
}
}  // namespace

TEST_CASE("counters: an injected source is read at every recorded enter and exit", "[papi]") {
  hooks::reset_for_testing();
  REQUIRE(hooks::configure(no_autofilter()) == Status::kOk);
  hooks::counters::install_for_testing({"X", "Y", "Z"}, fake_read);
  CHECK(defs::counter_names() == std::vector<std::string>{"X", "Y", "Z"});
  g_fake = 0;
  {
    Recording rec;
    enter(A);
    leave(A);
    const auto ev = rec.events();
    REQUIRE(ev.size() == 4);
    CHECK(ev[0].kind == EventKind::kEnter);
    CHECK(ev[1].kind == EventKind::kCounters);
    CHECK(ev[1].time == ev[0].time);
    CHECK(ev[1].bytes == 3);
    CHECK(ev[1].counters[0] == 10);
    CHECK(ev[1].counters[1] == 100);
    CHECK(ev[1].counters[2] == 7);
    CHECK(ev[2].kind == EventKind::kExit);
    CHECK(ev[3].kind == EventKind::kCounters);
    CHECK(ev[3].counters[0] == 20);
    CHECK(ev[3].counters[1] == 200);
  }
  // The synthetic test events work anywhere; an unknown or unavailable PAPI event is dropped
  // (with one warning) and measurement continues with the rest.
  const auto names = hooks::counters::start("CRITPATH_TEST_READS, NO_SUCH_EVENT_XYZ ,CRITPATH_TEST_NS");
  CHECK(names == std::vector<std::string>{"CRITPATH_TEST_READS", "CRITPATH_TEST_NS"});
  CHECK(hooks::counters::g_count == 2);
  uint64_t v[trace::kMaxCounters];
  REQUIRE(hooks::counters::g_read(v));
  const uint64_t reads = v[0];
  REQUIRE(hooks::counters::g_read(v));
  CHECK(v[0] == reads + 1);
  CHECK(v[1] > 0);
  hooks::counters::stop();
  defs::set_counter_names({});
  CHECK(hooks::counters::g_count == 0);
}

TEST_CASE("symbols: C++ and Fortran names are demangled; addresses resolve", "[hooks]") {
  CHECK(hooks::demangle("_ZN2ns3VecIdE3dotERKS1_") == "ns::Vec<double>::dot(ns::Vec<double> const&)");
  CHECK(hooks::demangle("__solver_MOD_step") == "solver::step");
  CHECK(hooks::demangle("main") == "main");
  CHECK(hooks::demangle("_Znot_valid") == "_Znot_valid");
  const hooks::SymbolInfo s = hooks::resolve_symbol(reinterpret_cast<uintptr_t>(&cp_ns::twice<int>));
  CHECK(s.found);
  CHECK(s.name == "int cp_ns::twice<int>(int)");
  CHECK(s.mangled.rfind("_Z", 0) == 0);
  const hooks::SymbolInfo c = hooks::resolve_symbol(reinterpret_cast<uintptr_t>(&cp_test_c));
  CHECK(c.name == "cp_test_c");
#ifdef CRITPATH_TEST_HAVE_LIBDW
  CHECK(c.file.find("hooks_test.cpp") != std::string::npos);
  CHECK(c.line > 0);
#endif
  const hooks::SymbolInfo none = hooks::resolve_symbol(16);
  CHECK_FALSE(none.found);
  CHECK(none.name == "0x10");
}

TEST_CASE("hooks: other threads keep their own shadow stacks and leave cleanly", "[hooks][tsan]") {
  hooks::reset_for_testing();
  Recording rec(runtime::Phase::kPreInit);
  enter(A);
  std::thread th([] {
    enter(B);
    enter(C);
    leave(C);
    // B stays open: the thread's exit (pthread key destructor) releases the stack.
  });
  th.join();
  CHECK(hooks::shadow_depth() == 1);  // this thread's stack is untouched
  leave(A);
  CHECK(hooks::shadow_depth() == 0);
  CHECK(rec.events().empty());
}
