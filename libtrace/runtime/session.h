// critpath — libtrace/runtime/session.h
//
// The measurement life cycle as seen from the MPI adapter. libtrace knows no MPI; the MPI
// side of a session (ranks, output directory agreement, clock sync, the in-situ analysis)
// lives in analyzer/session and registers itself here, the way Score-P's substrates
// register with its core. The MPI_Init/MPI_Finalize wrappers only call these four entry
// points:
//
//   MPI_Init:     t = runtime::now();  rc = PMPI_Init(...);  if ok: session_init(t, level)
//   MPI_Finalize: session_finalize();  rc = PMPI_Finalize();  session_after_finalize()
//
// None of them throws; a measurement problem disables recording and prints one warning.
#pragma once

#include <cstdint>

namespace critpath::runtime {

struct SessionHooks {
  // Called once after a successful PMPI_Init/PMPI_Init_thread. t_enter: ticks at the entry
  // of MPI_Init (before PMPI_Init). init_region: region id of the MPI call used.
  void (*on_init)(uint64_t t_enter, uint32_t init_region, int thread_level);
  // Called at the entry of MPI_Finalize, before PMPI_Finalize.
  void (*on_finalize)(uint32_t finalize_region);
  // Called after PMPI_Finalize returned.
  void (*after_finalize)();
  // MPI_Pcontrol(level).
  void (*on_pcontrol)(int level);
};

void register_session(const SessionHooks* hooks);
void session_init(uint64_t t_enter, uint32_t init_region, int thread_level);
void session_finalize(uint32_t finalize_region);
void session_after_finalize();
void session_pcontrol(int level);

}  // namespace critpath::runtime
