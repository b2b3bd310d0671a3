// critpath — analyzer/session/analysis_guard.cpp
#include "analyzer/session/analysis_guard.h"

#include <malloc.h>
#include <time.h>

#include "analyzer/engine/watchdog.h"
#include "libtrace/runtime/log.h"

namespace critpath::analyzer {
namespace {

// CRITPATH_DEBUG_ANALYSIS_STALL: the chosen rank sits here until the deadline has passed, as a
// rank stuck in its own work would.
void stall_if_chosen(const config::Config& cfg, int first, int count) {
  if (cfg.debug_analysis_stall < first || cfg.debug_analysis_stall >= first + count) return;
  if (cfg.analysis_timeout <= 0) return;                  // would stall forever
  if (cfg.debug_analysis_stall_stage != "start") return;  // the engine stalls at that stage
  while (!engine::watchdog_expired()) {
    const timespec ms = {0, 10000000};
    nanosleep(&ms, nullptr);
  }
}

// glibc's defaults (mallopt(3)): 128 KiB for both; the mmap threshold's dynamic adjustment
// stays off once set, which only changes where later large blocks come from.
constexpr int kDefaultMmapThreshold = 128 * 1024;
constexpr int kDefaultTrimThreshold = 128 * 1024;

void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);  // glibc's maximum on 64-bit
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

void release_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, kDefaultMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, kDefaultTrimThreshold);
  malloc_trim(0);
}

}  // namespace

Status start_guarded_analysis(MPI_Comm world, engine::Comm& ranks, const config::Config& cfg, int rank) {
  keep_freed_memory();
  engine::watchdog_start(cfg.analysis_timeout);
  const Status s = engine::Comm::native(world, ranks);
  if (s == Status::kOk && !engine::watchdog_expired()) engine::watchdog_start(cfg.analysis_timeout);
  stall_if_chosen(cfg, rank, 1);
  return s;
}

Status start_guarded_analysis(MPI_Comm procs, int locations, std::vector<engine::Comm>& ranks,
                              const config::Config& cfg, int first, int count) {
  keep_freed_memory();
  engine::watchdog_start(cfg.analysis_timeout);
  const Status s = engine::Comm::hosted(procs, locations, ranks);
  if (s == Status::kOk && !engine::watchdog_expired()) engine::watchdog_start(cfg.analysis_timeout);
  stall_if_chosen(cfg, first, count);
  return s;
}

void end_guarded_analysis(const config::Config& cfg, int rank) {
  if (engine::watchdog_expired() && rank == 0)
    log::warn("analysis incomplete: it did not finish within CRITPATH_ANALYSIS_TIMEOUT=%d s (a rank "
              "stalled or the ranks' traces disagree); the report is missing or lacks what its notes "
              "say",
              cfg.analysis_timeout);
  engine::watchdog_stop();
  release_freed_memory();
}

}  // namespace critpath::analyzer
