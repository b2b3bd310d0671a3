// critpath — libtrace/runtime/log.cpp
#include "libtrace/runtime/log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <set>
#include <utility>

#include "libtrace/runtime/status.h"

namespace critpath::log {
namespace {
int g_rank = -1;
int g_verbosity = 1;
std::mutex g_mu;
std::vector<std::string>* g_notes = nullptr;  // leaked on purpose: usable during exit
std::set<std::string>* g_causes = nullptr;
// A thread that speaks for one traced rank of several in this process (critpath-analyze).
constexpr int kNoThreadRank = -2;
thread_local int t_rank = kNoThreadRank;
thread_local std::vector<std::string>* t_notes = nullptr;
thread_local std::set<std::string>* t_causes = nullptr;  // warn_once's, with t_rank

int effective_rank() { return t_rank != kNoThreadRank ? t_rank : g_rank; }

void write_line(const char* prefix, const char* fmt, va_list ap) {
  char buf[1024];
  int n = std::snprintf(buf, sizeof buf, "%s", prefix);
  int m = std::vsnprintf(buf + n, sizeof buf - size_t(n) - 1, fmt, ap);
  size_t len = size_t(n) + (m < 0 ? 0 : std::min<size_t>(size_t(m), sizeof buf - size_t(n) - 2));
  buf[len++] = '\n';
  ssize_t w = ::write(2, buf, len);
  (void)w;
}
}  // namespace

void set_rank(int rank) { g_rank = rank; }
int rank() { return effective_rank(); }
void set_thread_rank(int rank, std::vector<std::string>* notes) {
  t_rank = rank;
  t_notes = notes;
  delete t_causes;
  t_causes = nullptr;
}
void swap_thread_rank(ThreadRank& other) {
  std::swap(t_rank, other.rank);
  std::swap(t_notes, other.notes);
  auto* causes = static_cast<std::set<std::string>*>(other.causes);
  std::swap(t_causes, causes);
  other.causes = causes;
}
void set_verbosity(int level) { g_verbosity = level; }
int verbosity() { return g_verbosity; }

// Never throws: these run inside catch handlers of the recording path. Out of memory loses
// the note (the stderr line has been written already).
static void keep(const char* fmt, va_list ap) {
  char buf[1024];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  try {
    if (t_notes) {
      t_notes->push_back(buf);
      return;
    }
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_notes) g_notes = new std::vector<std::string>;
    g_notes->push_back(buf);
  } catch (...) {
  }
}

void warn(const char* fmt, ...) {
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  write_line("critpath: ", fmt, ap);
  keep(fmt, aq);
  va_end(aq);
  va_end(ap);
}

void warn_once(const char* cause, const char* fmt, ...) {
  try {
    if (t_rank != kNoThreadRank) {
      if (!t_causes) t_causes = new std::set<std::string>;
      if (!t_causes->insert(cause).second) return;
    } else {
      std::lock_guard<std::mutex> lock(g_mu);
      if (!g_causes) g_causes = new std::set<std::string>;
      if (!g_causes->insert(cause).second) return;
    }
  } catch (...) {
    // No memory to remember the cause: print anyway (a repeated line beats a lost one).
  }
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  write_line("critpath: ", fmt, ap);
  keep(fmt, aq);
  va_end(aq);
  va_end(ap);
}

void info0(int level, const char* fmt, ...) {
  if (effective_rank() > 0 || g_verbosity < level) return;
  va_list ap;
  va_start(ap, fmt);
  write_line("critpath: ", fmt, ap);
  va_end(ap);
}

void print0(const std::string& line) {
  if (effective_rank() > 0) return;
  std::string l = line + "\n";
  ssize_t w = ::write(2, l.data(), l.size());
  (void)w;
}

std::vector<std::string> notes() {
  if (t_notes) return *t_notes;
  std::lock_guard<std::mutex> lock(g_mu);
  return g_notes ? *g_notes : std::vector<std::string>{};
}

void add_note(std::string note) {
  try {
    if (t_notes) {
      t_notes->push_back(std::move(note));
      return;
    }
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_notes) g_notes = new std::vector<std::string>;
    g_notes->push_back(std::move(note));
  } catch (...) {
  }
}

void note(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  keep(fmt, ap);
  va_end(ap);
}

void reset_for_testing() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_notes) g_notes->clear();
  if (g_causes) g_causes->clear();
}

}  // namespace critpath::log
