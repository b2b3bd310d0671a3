/* critpath — tests/support/yield_shim.c: a test-only LD_PRELOAD shim that makes busy-polling
 * MPI progress engines give the CPU away when they find nothing to do.
 *
 * Where it sits: outside the data flow entirely. It is never linked into libcritpath.so and
 * not installed; the MPI test driver (tests/mpi/run_mpi_test.py), demo.sh and the benchmarks
 * preload it next to the tracer when running more ranks than cores.
 *
 * Why: Debian's MPICH 4.0.2 (ch4:ucx) waits in a tight loop around ucp_worker_progress(). With
 * more ranks than cores a waiting rank burns its whole time slice while the rank it waits for
 * is descheduled: a barrier on 4 ranks / 2 cores costs ~8 ms instead of ~10 us.
 *
 * How: this library defines ucp_worker_progress itself; being preloaded, it wins symbol
 * resolution, finds UCX's definition with dlsym(RTLD_NEXT) and forwards to it. When the call
 * progressed nothing, the thread yields:
 *
 *   idle polls in a row   1 .. kSpins           > kSpins
 *   action                sched_yield()         nanosleep(1 us)  (~50-60 us with timer slack)
 *
 * sched_yield() alone is enough on an otherwise idle machine, but when other processes compete
 * for the cores (ctest -j2 running unit tests beside an MPI test) CFS keeps handing the CPU
 * back to the yielding rank and a barrier costs milliseconds again; sleeping after a short
 * spin lets the peer rank (and the competing process) run. Measured barrier latency, 4 / 8
 * ranks on 2 cores with two competing CPU hogs: yield only ~2.8 / ~5.5 ms, spin-then-sleep
 * with 32 spins ~0.3 / ~0.55 ms; idle machine: ~10 / ~30 us for both.
 * YIELD_SHIM_SPINS=<n> overrides kSpins (0 = always sleep); deliberately not a CRITPATH_*
 * variable, which the tracer's config parser would flag as unknown.
 *
 * Contract: behaviour and return value of ucp_worker_progress are otherwise unchanged.
 * Thread-safe: the resolved pointer and the spin limit are published with atomic stores
 * (racing first calls compute the same values); the idle counter is thread-local. Not
 * async-signal-safe on the first call (dlsym, getenv). If UCX is not loaded in the process the
 * function reports no progress and idles, which is what an idle progress engine would do;
 * nothing in such a process calls it anyway. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

enum { kSpins = 32 };

/* ucp_worker_h is an opaque pointer; no UCX headers are needed to forward it. */
typedef unsigned (*critpath_ucp_progress_fn)(void *worker);

static critpath_ucp_progress_fn critpath_real_ucp_worker_progress;
static int critpath_shim_spins = -1; /* -1: not read yet */
static __thread unsigned critpath_shim_idle_polls;

static critpath_ucp_progress_fn critpath_resolve_progress(void) {
  critpath_ucp_progress_fn fn = __atomic_load_n(&critpath_real_ucp_worker_progress, __ATOMIC_ACQUIRE);
  if (fn == 0) {
    /* POSIX leaves converting void* to a function pointer to the platform; on Linux it is
     * exact. Going through a union keeps -Wpedantic quiet. */
    union {
      void *obj;
      critpath_ucp_progress_fn fn;
    } sym;
    sym.obj = dlsym(RTLD_NEXT, "ucp_worker_progress");
    fn = sym.fn;
    if (fn != 0) __atomic_store_n(&critpath_real_ucp_worker_progress, fn, __ATOMIC_RELEASE);
  }
  return fn;
}

static unsigned critpath_spin_limit(void) {
  int spins = __atomic_load_n(&critpath_shim_spins, __ATOMIC_RELAXED);
  if (spins < 0) {
    const char *text = getenv("YIELD_SHIM_SPINS");
    char *end = 0;
    long value = text != 0 ? strtol(text, &end, 10) : -1;
    spins = (text != 0 && end != text && *end == '\0' && value >= 0 && value < 1000000) ? (int)value : kSpins;
    __atomic_store_n(&critpath_shim_spins, spins, __ATOMIC_RELAXED);
  }
  return (unsigned)spins;
}

__attribute__((visibility("default"))) unsigned ucp_worker_progress(void *worker) {
  critpath_ucp_progress_fn fn = critpath_resolve_progress();
  unsigned progressed = fn != 0 ? fn(worker) : 0u;
  if (progressed != 0) {
    critpath_shim_idle_polls = 0;
    return progressed;
  }
  if (critpath_shim_idle_polls < critpath_spin_limit()) {
    ++critpath_shim_idle_polls;
    sched_yield();
  } else {
    struct timespec pause = {0, 1000};
    nanosleep(&pause, 0);
  }
  return progressed;
}
