// critpath — libtrace/runtime/log.h
//
// Messages from inside someone else's process. Every line starts with "critpath: " and is
// written with one write(2) so lines from different ranks don't interleave mid-line.
// Per-run notes print on rank 0 only (set_rank); warnings about one rank's own problem print
// on that rank, once per cause. Every warning is also kept as a note for the report.
#pragma once

#include <string>
#include <vector>

namespace critpath::log {

void set_rank(int rank);  // -1 until MPI_Init has told us
int rank();
// The calling thread speaks for traced rank `rank` (critpath-analyze: one thread per traced
// rank, several per process): rank(), the rank-0-only lines and warn_once's causes follow
// it, and its warnings are kept in `notes` (owned by the caller, used by this thread only;
// nullptr: the process's notes). set_thread_rank(-2, nullptr) undoes it.
void set_thread_rank(int rank, std::vector<std::string>* notes);
// What set_thread_rank() gave the calling thread, with warn_once's causes: a fiber that speaks
// for a traced rank (critpath-analyze, engine/fiber.h) swaps its own in when it resumes on a
// worker thread and out when it leaves. Fresh: no rank of its own (the process's).
struct ThreadRank {
  int rank = -2;
  std::vector<std::string>* notes = nullptr;
  void* causes = nullptr;  // warn_once's, owned (leaked by a fiber that never swaps it back)
};
void swap_thread_rank(ThreadRank& other);
void set_verbosity(int level);  // CRITPATH_VERBOSE
int verbosity();

// One line on stderr, prefixed "critpath: ", from any rank. Kept as a report note.
void warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// Like warn, but only the first call with a given cause string prints.
void warn_once(const char* cause, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// Rank 0 only, when verbosity >= level. Not kept as a note.
void info0(int level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// Writes a pre-formatted line (without prefix) from rank 0 only, e.g. config warnings.
void print0(const std::string& line);

// Notes collected for the report (warnings of this rank). warn, warn_once and add_note never
// throw (out of memory loses the note, not the stderr line).
std::vector<std::string> notes();
void add_note(std::string note);
// A report note without a stderr line (formatted into a fixed buffer; never throws).
void note(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// Forgets every note and every warn_once cause (tests only).
void reset_for_testing();

}  // namespace critpath::log
