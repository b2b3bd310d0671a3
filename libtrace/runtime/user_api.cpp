// critpath — libtrace/runtime/user_api.cpp: the exported critpath_* region API.
//
// critpath_region_define sits behind a per-thread cache keyed by the name pointer (string
// literals keep their address), confirmed by a string compare, so the C++ guard
// critpath::Region("name") costs a few nanoseconds after the first call on a thread.
#include <cstring>

#include "critpath.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/recorder.h"

namespace critpath::runtime {
namespace {
struct NameCacheEntry {
  const char* ptr;
  const char* name;  // the table's own copy (stable: definitions are never removed)
  unsigned id;
};
constexpr unsigned kNameCacheSize = 64;
thread_local NameCacheEntry t_name_cache[kNameCacheSize] __attribute__((tls_model("initial-exec")));
}  // namespace
}  // namespace critpath::runtime

using namespace critpath;

extern "C" CRITPATH_EXPORT CRITPATH_NOINSTR unsigned critpath_region_define(const char* name) {
  if (!name || !*name) return 0;
  auto& e = runtime::t_name_cache[(reinterpret_cast<uintptr_t>(name) >> 3) % runtime::kNameCacheSize];
  if (e.ptr == name && std::strcmp(e.name, name) == 0) return e.id;
  try {
    const unsigned id = defs::regions().define(name, defs::RegionKind::kUser);
    e.ptr = name;
    e.name = defs::regions().stable_name(id);
    e.id = id;
    return id;
  } catch (...) {
    return 0;
  }
}

extern "C" CRITPATH_EXPORT CRITPATH_NOINSTR void critpath_enter(unsigned region) {
  if (region == 0) return;
  runtime::record_region_now(trace::EventKind::kEnter, region);
}

extern "C" CRITPATH_EXPORT CRITPATH_NOINSTR void critpath_exit(unsigned region) {
  if (region == 0) return;
  runtime::record_region_now(trace::EventKind::kExit, region);
}
