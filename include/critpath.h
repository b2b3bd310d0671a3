/* critpath — include/critpath.h: the user region API (C, usable from C++).
 *
 * Mark regions of your own code so they appear in critpath's call paths:
 *
 *   unsigned r = critpath_region_define("solver");   // idempotent per name, thread-safe
 *   critpath_enter(r);  ...  critpath_exit(r);
 *
 *   CRITPATH_REGION_BEGIN("solver"); ... CRITPATH_REGION_END("solver");   // cached handles
 *
 *   { critpath::Region r("solver"); ... }                                 // C++ RAII guard
 *
 * Enter/exit calls must nest properly with each other and with MPI calls. All functions are
 * harmless no-ops before MPI_Init, after MPI_Finalize, while paused (MPI_Pcontrol(0)) and
 * when the library is disabled (CRITPATH_ENABLE=0). Without libcritpath loaded, link with
 * -lcritpath or preload it (critpath-run).
 */
#ifndef CRITPATH_H
#define CRITPATH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Returns the handle of the region called `name`, defining it on first use. Thread-safe;
 * the same name always yields the same handle. Returns 0 for a NULL or empty name. */
unsigned critpath_region_define(const char* name);
/* The same for a name of `length` bytes that need not be NUL-terminated (the Fortran module
 * `critpath` calls this). */
unsigned critpath_region_define_n(const char* name, size_t length);
/* Records entering / leaving a region. Handle 0 is ignored. */
void critpath_enter(unsigned region);
void critpath_exit(unsigned region);

#ifdef __cplusplus
}
#endif

/* Per-call-site cached handle: one define per site, then only enter/exit. */
#define CRITPATH_REGION_HANDLE_(name)                                            \
  __extension__({                                                                \
    static unsigned critpath_handle_ = 0;                                        \
    unsigned critpath_h_ = __atomic_load_n(&critpath_handle_, __ATOMIC_RELAXED); \
    if (!critpath_h_) {                                                          \
      critpath_h_ = critpath_region_define(name);                                \
      __atomic_store_n(&critpath_handle_, critpath_h_, __ATOMIC_RELAXED);        \
    }                                                                            \
    critpath_h_;                                                                 \
  })
#define CRITPATH_REGION_BEGIN(name) critpath_enter(CRITPATH_REGION_HANDLE_(name))
#define CRITPATH_REGION_END(name) critpath_exit(CRITPATH_REGION_HANDLE_(name))

#ifdef __cplusplus
/* The guard's own functions are never instrumented (critpath-cxx compiles with
 * -finstrument-functions, or with -fxray-instrument in XRay mode): the region is what the
 * guard records, not the guard. */
#if defined(__clang__)
#define CRITPATH_NO_INSTRUMENT_ __attribute__((no_instrument_function, xray_never_instrument))
#elif defined(__GNUC__)
#define CRITPATH_NO_INSTRUMENT_ __attribute__((no_instrument_function))
#else
#define CRITPATH_NO_INSTRUMENT_
#endif
namespace critpath {
/* Enters a region for the lifetime of the object. */
class Region {
 public:
  CRITPATH_NO_INSTRUMENT_ explicit Region(const char* name) : id_(critpath_region_define(name)) {
    critpath_enter(id_);
  }
  CRITPATH_NO_INSTRUMENT_ explicit Region(unsigned handle) : id_(handle) { critpath_enter(id_); }
  CRITPATH_NO_INSTRUMENT_ ~Region() { critpath_exit(id_); }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

 private:
  unsigned id_;
};
}  // namespace critpath
#endif

#endif /* CRITPATH_H */
