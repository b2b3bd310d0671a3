// critpath — analyzer/analysis.cpp: the in-situ analysis driver (see analysis.h).
#include "analyzer/analysis.h"

#include <mpi.h>
#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <string>

#include "analyzer/profile/profile.h"
#include "analyzer/report/event_dump.h"
#include "analyzer/report/report.h"
#include "libtrace/buffer/chunk_store.h"
#include "libtrace/config/config.h"
#include "libtrace/runtime/log.h"
#include "libtrace/runtime/recorder_control.h"

namespace critpath::analyzer {
namespace {

std::vector<std::string> gather_notes(MPI_Comm comm, int rank, int size) {
  std::string mine;
  for (const std::string& n : log::notes()) mine += "rank " + std::to_string(rank) + ": " + n + "\n";
  int len = int(mine.size());
  std::vector<int> lens(size_t(rank == 0 ? size : 0)), displs(lens.size());
  PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm);
  std::string all;
  if (rank == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      displs[size_t(r)] = total;
      total += lens[size_t(r)];
    }
    all.resize(size_t(total));
  }
  PMPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, comm);
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i] == '\n') {
      out.push_back(all.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

}  // namespace

void run_analysis(RunInfo& run, uint64_t wall0) {
  const config::Config& cfg = config::current();
  const trace::ChunkStore& store = runtime::chunk_store();
  MPI_Comm comm = MPI_COMM_NULL;
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
    log::warn("cannot create the analysis communicator; no report");
    return;
  }
  PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

  if (!run.output_dir.empty()) {
    if (cfg.dump_events) {
      const std::string dir = run.output_dir + "/events";
      mkdir(dir.c_str(), 0755);
      const std::string path = dir + "/rank-" + std::to_string(run.rank) + ".txt";
      if (write_event_dump(store, path) != Status::kOk)
        log::warn("cannot write the event dump %s", path.c_str());
    }
    if (cfg.keep_trace) {
      const std::string dir = run.output_dir + "/trace";
      mkdir(dir.c_str(), 0755);
      const std::string path = dir + "/rank-" + std::to_string(run.rank) + ".cptrace";
      if (store.write_file(path) != Status::kOk) log::warn("cannot keep the trace in %s", path.c_str());
    }
  }
  if (!cfg.analysis || run.output_dir.empty()) {
    PMPI_Comm_free(&comm);
    return;
  }

  LocalProfile local = build_profile(store);
  if (local.status != Status::kOk)
    log::warn("the trace of rank %d did not decode completely (%s); its results are partial",
              run.rank, to_string(local.status));
  GlobalProfile global;
  const Status us = unify_profile(local, run.conv, comm, global);
  if (us != Status::kOk) {
    log::warn("call-path unification failed (%s); no report", to_string(us));
    PMPI_Comm_free(&comm);
    return;
  }

  // Per-rank statistics.
  const trace::ChunkStoreStats ss = store.stats();
  const runtime::RecorderStats rs = runtime::recorder_stats();
  std::vector<double> st(kStatCount, 0.0);
  st[kStatEvents] = double(local.events);
  st[kStatChunks] = double(ss.chunks);
  st[kStatCompressedBytes] = double(ss.bytes_total);
  st[kStatEncodedBytes] = double(ss.encoded_bytes);
  st[kStatSpilledBytes] = double(ss.bytes_spilled);
  st[kStatChunksSpilled] = double(ss.chunks_spilled);
  st[kStatOverheadSeconds] = run.conv.ticks_to_seconds(rs.overhead_ticks_max_thread);
  st[kStatCompressSeconds] = run.conv.ticks_to_seconds(rs.compress_ticks);
  st[kStatInitNs] = run.conv.to_ns(run.init_enter_ticks);
  st[kStatFinalizeNs] = run.conv.to_ns(run.finalize_enter_ticks);
  st[kStatUnmatchedExits] = double(local.unmatched_exits);
  st[kStatUnclosedFrames] = double(local.unclosed_frames);
  st[kStatPartial] = local.status == Status::kOk ? 0.0 : 1.0;
  st[kStatThreads] = double(rs.threads);
  std::vector<double> all_st(run.rank == 0 ? size_t(run.size) * kStatCount : 0);
  PMPI_Gather(st.data(), kStatCount, MPI_DOUBLE, all_st.data(), kStatCount, MPI_DOUBLE, 0, comm);
  std::vector<std::string> notes = gather_notes(comm, run.rank, run.size);

  if (run.rank == 0) {
    ReportInput in;
    in.run = &run;
    in.profile = &global;
    double init_min = 0, fin_max = 0;
    for (int r = 0; r < run.size; ++r) {
      std::vector<double> row(all_st.begin() + r * kStatCount, all_st.begin() + (r + 1) * kStatCount);
      if (r == 0 || row[kStatInitNs] < init_min) init_min = row[kStatInitNs];
      if (r == 0 || row[kStatFinalizeNs] > fin_max) fin_max = row[kStatFinalizeNs];
      in.rank_stats.push_back(std::move(row));
    }
    in.wall_time_s = (fin_max - init_min) * 1e-9;
    in.notes = std::move(notes);
    in.config_text = config::describe(cfg);
    in.analysis_s = double(clock::monotonic_ns() - wall0) * 1e-9;
    run.analysis_seconds = in.analysis_s;
    const Status ws = write_reports(in);
    if (ws == Status::kOk)
      log::print0("critpath: report in " + run.output_dir + "/summary.txt");
    else
      log::warn("writing the report into %s failed (%s)", run.output_dir.c_str(), to_string(ws));
  }
  PMPI_Comm_free(&comm);
}

}  // namespace critpath::analyzer
