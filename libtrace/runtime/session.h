// critpath — libtrace/runtime/session.h
//
// The measurement life cycle as seen from the MPI adapter. libtrace knows no MPI; the MPI
// side of a session (ranks, output directory agreement, clock sync, the in-situ analysis)
// lives in analyzer/session and registers itself here, the way Score-P's substrates
// register with its core. The MPI_Init/MPI_Finalize wrappers only call these four entry
// points (and MPI_Abort one more):
//
//   MPI_Init:     t = runtime::now();  rc = PMPI_Init(...);  if ok: session_init(t, level)
//   MPI_Finalize: session_finalize();  rc = PMPI_Finalize();  session_after_finalize()
//   MPI_Abort:    session_abort(errorcode);  PMPI_Abort(...)
//
// None of them throws; a measurement problem disables recording and prints one warning.
#pragma once

#include <cstdint>

#include "libtrace/runtime/recorder.h"

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
  // MPI_Abort(comm, errorcode), before PMPI_Abort.
  void (*on_abort)(int errorcode);
};

void register_session(const SessionHooks* hooks);

// Adapters that keep state across the recording window (compiler_hooks: the shadow stack of
// functions entered before MPI_Init, per-thread statistics, symbol names) listen here.
//   on_recording_start: on the MPI_Init thread, right after the session started recording
//                       (after the root and MPI_Init events); may record events.
//   on_recording_stop:  at the start of recorder_stop() inside MPI_Finalize, after the last
//                       event and before the analysis reads the trace and the definitions;
//                       must not record. Either pointer may be null.
// At most kMaxAdapterListeners; registration is a pointer store (safe in constructors).
struct AdapterListener {
  void (*on_recording_start)();
  void (*on_recording_stop)();
};
constexpr unsigned kMaxAdapterListeners = 4;
void add_adapter_listener(const AdapterListener* listener);
void notify_recording_start();  // session_init calls it
void notify_recording_stop();   // recorder_stop calls it
// ---- The measurement phase (Phase, recorder.h) ------------------------------------------
// The session (analyzer/session, fault paths included) changes the phase only through these;
// adapters only read it (recording()). Each transition applies atomically when the phase is
// one it may leave, and says whether it applied: a disabled session stays disabled, a
// finished one never records again.
//
//   kPreInit --start_recording--> kRecording <--pause/resume--> kPaused
//   kRecording, kPaused --finish_recording--> kRecording (the last events: MPI_Finalize, the
//                                             root's exit) --enter_finalizing--> kFinalizing
//   kFinalizing (or kPreInit: MPI never initialized) --end_session--> kDone
//   any --disable_measurement--> kDisabled
Phase current_phase();
// The clock recording reads (TSC or CLOCK_MONOTONIC): only before start_recording.
bool use_tsc_timer(bool tsc);
bool start_recording();
bool pause_recording();
bool resume_recording();
// The phase it left through `was` (kRecording or kPaused); false from any other.
bool finish_recording(Phase& was);
bool enter_finalizing();
bool end_session();
void disable_measurement();

void session_init(uint64_t t_enter, uint32_t init_region, int thread_level);
void session_finalize(uint32_t finalize_region);
void session_after_finalize();
void session_pcontrol(int level);
void session_abort(int errorcode);

}  // namespace critpath::runtime
