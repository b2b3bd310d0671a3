// critpath — tests/unit/hooks/xray_test.cpp: the XRay adapter (compiler_hooks/xray.cpp) against
// a fake XRay runtime: which functions get patched, that the handler records like the
// -finstrument-functions hooks, and that a function the automatic filter drops is unpatched,
// so that its later calls reach critpath no more. The real runtime: tests/mpi/hooks
// (modes_xray*).
#include <catch2/catch.hpp>

#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "compiler_hooks/hook_core.h"
#include "compiler_hooks/hooks.h"
#include "compiler_hooks/xray_api.h"
#include "libtrace/buffer/codec.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/recorder.h"

// A namespace of this file's own: the unit tests build several files as one (unity build,
// tests/CMakeLists.txt), and its helpers share names with other files'.
namespace xray_test {

extern "C" __attribute__((noinline)) int cp_xray_a(int x) { return x + 11; }
extern "C" __attribute__((noinline)) int cp_xray_b(int x) { return x + 12; }
extern "C" __attribute__((noinline)) int cp_xray_c(int x) { return x + 13; }

using namespace critpath;
using trace::EventKind;

namespace {

// The fake runtime: function ids 1..3, one patched flag each.
struct Fake {
  void (*handler)(int32_t, int) = nullptr;
  bool patched[4] = {};
  int patch_all_calls = 0, patch_one_calls = 0, unpatch_one_calls = 0, unpatch_all_calls = 0;
};
Fake g_fake;
const uintptr_t kAddr[4] = {0, reinterpret_cast<uintptr_t>(&cp_xray_a),
                            reinterpret_cast<uintptr_t>(&cp_xray_b), reinterpret_cast<uintptr_t>(&cp_xray_c)};

int fake_set_handler(void (*h)(int32_t, int)) {
  g_fake.handler = h;
  return 1;
}
int fake_remove_handler() {
  g_fake.handler = nullptr;
  return 1;
}
int fake_patch() {
  ++g_fake.patch_all_calls;
  for (int i = 1; i <= 3; ++i) g_fake.patched[i] = true;
  return CRITPATH_XRAY_SUCCESS;
}
int fake_unpatch() {
  ++g_fake.unpatch_all_calls;
  for (int i = 1; i <= 3; ++i) g_fake.patched[i] = false;
  return CRITPATH_XRAY_SUCCESS;
}
int fake_patch_function(int32_t id) {
  ++g_fake.patch_one_calls;
  g_fake.patched[id] = true;
  return CRITPATH_XRAY_SUCCESS;
}
int fake_unpatch_function(int32_t id) {
  ++g_fake.unpatch_one_calls;
  g_fake.patched[id] = false;
  return CRITPATH_XRAY_SUCCESS;
}
uintptr_t fake_function_address(int32_t id) { return id >= 1 && id <= 3 ? kAddr[id] : 0; }
size_t fake_max_function_id() { return 3; }

// clang-format off
const critpath_xray_api kFakeApi = {CRITPATH_XRAY_API_VERSION, fake_set_handler,
                                    fake_remove_handler,       fake_patch,
                                    fake_unpatch,              fake_patch_function,
                                    fake_unpatch_function,     fake_function_address,
                                    fake_max_function_id};
// clang-format on

// A call of function `id` as its sleds would report it: only when patched.
void call(int32_t id, int spin_us = 0) {
  if (g_fake.patched[id] && g_fake.handler) g_fake.handler(id, CRITPATH_XRAY_ENTRY);
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us);
  while (std::chrono::steady_clock::now() < until) {
  }
  if (g_fake.patched[id] && g_fake.handler) g_fake.handler(id, CRITPATH_XRAY_EXIT);
}

// This thread records into a private buffer (as in hooks_test.cpp).
struct Recording {
  std::vector<trace::Slot> buf = std::vector<trace::Slot>(1 << 16);
  runtime::ThreadState saved = runtime::t_state;
  uint8_t saved_phase = runtime::g_phase.load();
  Recording() {
    runtime::ThreadState& t = runtime::t_state;
    t.base = t.pos = buf.data();
    t.limit = buf.data() + buf.size() - 64;
    t.state = 1;
    runtime::g_phase.store(uint8_t(runtime::Phase::kRecording));
  }
  ~Recording() {
    runtime::t_state = saved;
    runtime::g_phase.store(saved_phase);
  }
  std::vector<trace::Event> events() const {
    std::vector<trace::Event> out;
    REQUIRE(trace::slots_to_events(buf.data(), runtime::t_state.pos, out) == Status::kOk);
    return out;
  }
};

uint32_t region_of(uintptr_t fn) {
  for (const auto& f : hooks::function_table())
    if (f.address == fn) return f.region;
  return 0;
}

size_t count(const std::vector<trace::Event>& ev, EventKind k, uint32_t region) {
  size_t n = 0;
  for (const auto& e : ev) n += e.kind == k && e.region == region;
  return n;
}

}  // namespace

TEST_CASE("xray: patched at start, recorded, unpatched when auto-filtered, all unpatched at stop",
          "[hooks]") {
  hooks::reset_for_testing();
  hooks::xray::reset_for_testing();
  g_fake = Fake{};
  critpath_attach_xray(&kFakeApi);
  REQUIRE(hooks::xray::attached());
  hooks::Options o;
  o.autofilter_visits = 10;
  o.autofilter_ns = 1000000;  // 1 ms: B is short
  REQUIRE(hooks::configure(o) == Status::kOk);
  Recording rec;
  hooks::xray::start();
  CHECK(g_fake.patch_all_calls == 1);  // no filter file: one call patches every sled
  CHECK(g_fake.handler != nullptr);
  CHECK(hooks::xray::owns(kAddr[2]));
  CHECK_FALSE(hooks::xray::owns(kAddr[2] + 1));

  call(1);
  for (int i = 0; i < 25; ++i) call(2, 2);
  call(3);
  CHECK_FALSE(g_fake.patched[2]);  // unpatched by the automatic filter after 10 visits
  CHECK(g_fake.unpatch_one_calls == 1);
  CHECK(g_fake.patched[1]);
  const auto ev = rec.events();
  const uint32_t a = region_of(kAddr[1]), b = region_of(kAddr[2]), c = region_of(kAddr[3]);
  CHECK(count(ev, EventKind::kEnter, a) == 1);
  CHECK(count(ev, EventKind::kEnter, b) == 10);  // the later 15 calls never reached critpath
  CHECK(count(ev, EventKind::kExit, b) == 10);
  CHECK(count(ev, EventKind::kEnter, c) == 1);
  for (const auto& fe : hooks::function_table())
    if (fe.address == kAddr[2]) {
      CHECK(fe.auto_filtered);
      CHECK(fe.unrecorded_visits == 0);  // not counted either: that is the point
    }

  hooks::xray::stop();
  CHECK(g_fake.unpatch_all_calls == 1);
  CHECK(g_fake.handler == nullptr);
  call(1);  // after the stop: nothing
  CHECK(rec.events().size() == ev.size());
  hooks::recording_stopped();
  const defs::Instrumentation info = defs::current().instrumentation();
  CHECK(info.xray);
  CHECK_FALSE(info.gcc);
  CHECK(info.instrumented == 3);
  CHECK(info.patched == 3);
  CHECK(info.unpatched == 1);
  CHECK(info.auto_filtered == 1);
  CHECK(info.filtered == 0);
  CHECK(defs::regions().get(b).name == "cp_xray_b");
  hooks::xray::reset_for_testing();
}

TEST_CASE("xray: functions a filter file excludes are never patched", "[hooks]") {
  hooks::reset_for_testing();
  hooks::xray::reset_for_testing();
  g_fake = Fake{};
  critpath_attach_xray(&kFakeApi);
  char path[] = "/tmp/critpath-xray-filter-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const std::string text = "SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE cp_xray_c\nSCOREP_REGION_NAMES_END\n";
  REQUIRE(write(fd, text.data(), text.size()) == ssize_t(text.size()));
  close(fd);
  hooks::Options o;
  o.filter_file = path;
  o.autofilter_ns = 0;
  REQUIRE(hooks::configure(o) == Status::kOk);
  Recording rec;
  hooks::xray::start();
  unlink(path);
  CHECK(g_fake.patch_all_calls == 0);
  CHECK(g_fake.patch_one_calls == 2);
  CHECK(g_fake.patched[1]);
  CHECK(g_fake.patched[2]);
  CHECK_FALSE(g_fake.patched[3]);
  call(3);
  call(1);
  const auto ev = rec.events();
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].region == region_of(kAddr[1]));
  hooks::xray::stop();
  hooks::recording_stopped();
  const defs::Instrumentation info = defs::current().instrumentation();
  CHECK(info.instrumented == 3);
  CHECK(info.patched == 2);
  CHECK(info.filtered == 1);
  hooks::xray::reset_for_testing();
}

}  // namespace xray_test
