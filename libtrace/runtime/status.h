// critpath — libtrace/runtime/status.h
//
// Expected failures inside someone else's process are values, not exceptions or aborts:
// every fallible libtrace/analyzer operation returns a Status. Callers forward it with
// CRITPATH_FORWARD_IF_ERROR, and the runtime turns the first failure of each cause into
// one `critpath:` warning line (see runtime/log.h).
#pragma once

#include <cstdint>

namespace critpath {

// clang-format off (clang-format 14 mangles an attribute between `enum class` and the name)
enum class [[nodiscard]] Status : uint8_t{
    kOk = 0,
    kIoError = 1,        // open/write/read of a spill or output file failed (errno in the log)
    kNoMemory = 2,       // an allocation on a cold path failed
    kCorrupt = 3,        // a chunk or trace file does not decode (bad magic, size, varint)
    kCompressError = 4,  // zstd reported an error
    kUnsupported = 5,    // a feature is not available in this build or on this machine
    kInvalidArgument = 6,
    kMpiError = 7,  // an internal MPI call (analysis traffic) failed
};
// clang-format on

const char* to_string(Status s);

}  // namespace critpath

#define CRITPATH_FORWARD_IF_ERROR(expr)                                       \
  do {                                                                        \
    ::critpath::Status critpath_status_ = (expr);                             \
    if (critpath_status_ != ::critpath::Status::kOk) return critpath_status_; \
  } while (0)

#define CRITPATH_LIKELY(x) __builtin_expect(!!(x), 1)
#define CRITPATH_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define CRITPATH_NOINSTR __attribute__((no_instrument_function))
#define CRITPATH_EXPORT __attribute__((visibility("default")))

#ifdef CRITPATH_DEBUG_CHECKS
#include <cstdio>
#include <cstdlib>
#define CRITPATH_DCHECK(cond)                                                                 \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "critpath: DCHECK failed %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)
#else
#define CRITPATH_DCHECK(cond) ((void)0)
#endif
