// critpath — analyzer/engine/clock_sync.cpp
#include "analyzer/engine/clock_sync.h"

#include <algorithm>

#include "libtrace/config/config.h"

namespace critpath::analyzer {

ClockSkew parse_debug_skew(const std::string& spec, int rank, double origin_ns) {
  ClockSkew s;
  config::ClockSkewValue v;
  // The configuration parser warned about an invalid value and kept the default (none).
  if (rank == 0 || config::parse_clock_skew_value(spec, v) != config::ValueError::kOk) return s;
  const double sign = (rank % 2) ? 1.0 : -1.0;
  s.offset_s = sign * v.offset_s;
  s.drift = sign * v.drift_ppm * 1e-6;
  s.event_jump_s = sign * v.jump_s;
  s.origin_ns = origin_ns;
  s.active = v.offset_s != 0 || v.drift_ppm != 0 || v.jump_s != 0;
  return s;
}

OffsetSample measure_offset(MPI_Comm comm, double (*local_now)(), int pingpongs) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  OffsetSample best;
  best.rtt_ns = 1e300;
  constexpr int kTag = 0x7c11;
  if (rank == 0) {
    // Serve every other rank in turn: receive a ping, answer with our time.
    for (int r = 1; r < size; ++r) {
      for (int k = 0; k < pingpongs; ++k) {
        double dummy = 0;
        PMPI_Recv(&dummy, 1, MPI_DOUBLE, r, kTag, comm, MPI_STATUS_IGNORE);
        double t0 = local_now();
        PMPI_Send(&t0, 1, MPI_DOUBLE, r, kTag, comm);
      }
    }
    best.rtt_ns = 0;
    best.local_ns = local_now();
    return best;
  }
  for (int k = 0; k < pingpongs; ++k) {
    const double ta = local_now();
    PMPI_Send(&ta, 1, MPI_DOUBLE, 0, kTag, comm);
    double tm = 0;
    PMPI_Recv(&tm, 1, MPI_DOUBLE, 0, kTag, comm, MPI_STATUS_IGNORE);
    const double tb = local_now();
    if (tb - ta < best.rtt_ns) {
      best.rtt_ns = tb - ta;
      best.local_ns = 0.5 * (ta + tb);
      best.offset_ns = tm - best.local_ns;
    }
  }
  return best;
}

GlobalClock::GlobalClock(OffsetSample at_init, OffsetSample at_finalize, bool linear)
    : a_(at_init), b_(at_finalize), linear_(linear) {
  const double span = b_.local_ns - a_.local_ns;
  slope_ = span > 1e3 ? (b_.offset_ns - a_.offset_ns) / span : 0.0;
}

}  // namespace critpath::analyzer
