// critpath — analyzer/session/fault.cpp: the partial-trace dump (fault.h).
//
// Everything the dump needs that allocates is made at MPI_Init (fault_arm): the file paths,
// the stderr line's fixed parts and the JSON of the run facts known then. The dump itself
// (dump_once) only tries locks, writes to files it opens and fills in the rest of the JSON from
// the definitions tables with runtime::sigsafe::Writer.
#include "analyzer/session/fault.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "analyzer/session/trace_archive.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/recorder.h"
#include "libtrace/runtime/recorder_control.h"
#include "libtrace/runtime/session.h"
#include "libtrace/runtime/sigsafe.h"

namespace critpath::analyzer {
namespace {

using runtime::sigsafe::Writer;

// What the dump writes, prepared at arming. Leaked on purpose: the exit handler runs after
// static destructors may have run.
struct Prepared {
  std::string trace_dir;   // <output dir>/trace
  std::string chunk_path;  // trace/rank-<r>.cptrace
  std::string tail_path;   // trace/rank-<r>.tail
  std::string json_tmp;    // trace/rank-<r>.json.tmp, renamed to json_path when complete
  std::string json_path;
  std::string marker_path;  // trace/rank-<r>.dumping, created when this rank's dump starts
  std::string json_prefix;  // archive_prefix(run)
  std::string line_head;    // "critpath: rank <r>: "
  std::string line_tail;    // " in <dir>/trace; critpath-analyze <dir> reports ...\n"
  clock::TimerKind timer = clock::TimerKind::kTsc;
  int rank = 0;
  // The other ranks on this host whose kPeerSignal handler is installed (fault_set_peers), and
  // where their dumps appear: a rank that faults asks them to dump too and waits for them.
  std::vector<FaultPeer> peers;
  std::vector<std::string> peer_json;    // trace/rank-<peer>.json
  std::vector<std::string> peer_marker;  // trace/rank-<peer>.dumping
};
Prepared* g_prep = nullptr;
// How long a rank that leaves by exit() lets its peers begin their own dumps before it asks
// them to (tell_peers), in steps of 10 ms.
constexpr int kExitGraceSteps = 10;

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT};
struct sigaction g_old[NSIG];
bool g_installed[NSIG];
std::atomic<bool> g_armed{false};
pid_t g_pid = 0;  // a forked child must not write over its parent's files
// 0: no dump yet; 1: one is being written (by g_dumper); 2: written (or given up).
std::atomic<int> g_dump_state{0};
std::atomic<long> g_dumper{0};
// kPeerSignal's disposition before fault_arm installed on_peer_signal.
struct sigaction g_old_peer;
bool g_peer_installed = false;
// The reason this rank's dump gives when a peer asks for it ("stopped at rank <r>'s fault").
char g_peer_reason[64];

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    default: return "a signal";
  }
}

long this_thread() { return long(syscall(SYS_gettid)); }

// The rest of rank-<r>.json after the prefix: the run facts known only now, the (unknown)
// recorder statistics, what went into the chunk file, the definitions and the `partial` object.
bool write_json(int fd, const char* reason, int sig, const clock::ClockPair& end,
                const runtime::PartialDump& dump) {
  Writer w(fd);
  w.put(g_prep->json_prefix.data(), g_prep->json_prefix.size());
  w.put(",\"end\":{\"ticks\":").put_u64(end.ticks).put(",\"ns\":").put_u64(end.ns);
  w.put("},\"finalize_enter_ticks\":").put_u64(end.ticks);
  w.put(",\"fin_offset\":{\"local_ns\":0,\"offset_ns\":0,\"rtt_ns\":0}}");
  w.put(",\"recorder\":{\"overhead_ticks_max_thread\":0,\"overhead_ticks_total\":0,"
        "\"compress_ticks\":0,\"inline_compressions\":0,\"threads\":0,"
        "\"raw_chunks_allocated\":0,\"compress_errors\":0}");
  const trace::ChunkStoreStats& st = dump.stored;
  w.put(",\"store\":{\"chunks\":").put_u64(st.chunks).put(",\"events\":").put_u64(st.events);
  w.put(",\"bytes_total\":").put_u64(st.bytes_total).put(",\"bytes_in_memory\":").put_u64(st.bytes_total);
  w.put(",\"bytes_spilled\":0,\"chunks_spilled\":0,\"encoded_bytes\":").put_u64(st.encoded_bytes);
  w.put(",\"fingerprint\":").put_u64(st.fingerprint).put("}");
  bool complete = dump.complete;
  const defs::Definitions& d = defs::current();
  bool first = true;
  w.put(",\"regions\":[");
  complete &= d.regions.visit_signal_safe([&](const defs::RegionDef& r) {
    w.put(first ? "{\"id\":" : ",{\"id\":").put_u64(r.id);
    first = false;
    w.put(",\"name\":").put_json_string(r.name.data(), r.name.size());
    w.put(",\"kind\":").put_u64(unsigned(r.kind));
    w.put(",\"file\":").put_json_string(r.file.data(), r.file.size());
    w.put(",\"line\":").put_u64(r.line).put(",\"unrecorded_visits\":").put_u64(r.unrecorded_visits);
    w.put(",\"unrecorded_ticks\":").put_u64(r.unrecorded_ticks);
    w.put(",\"auto_filtered\":").put_bool(r.auto_filtered);
    if (r.kind == defs::RegionKind::kMpi) {
      const defs::MpiSemantics& m = r.mpi;
      w.put(",\"mpi\":[").put_u64(unsigned(m.cls)).put(",").put_u64(unsigned(m.sync));
      w.put(",").put_u64(unsigned(m.root)).put(",").put_u64(unsigned(m.completion));
      w.put(",").put_u64(unsigned(m.lifecycle)).put(",").put_u64(unsigned(m.rma)).put("]");
    }
    w.put("}");
  });
  auto ints = [&](const std::vector<int32_t>& v) {
    w.put("[");
    for (size_t i = 0; i < v.size(); ++i) w.put(i ? "," : "").put_i64(v[i]);
    w.put("]");
  };
  first = true;
  w.put("],\"comms\":[");
  complete &= d.comms.visit_signal_safe([&](const defs::CommDef& c) {
    w.put(first ? "{\"id\":" : ",{\"id\":").put_u64(c.id);
    first = false;
    w.put(",\"members\":");
    ints(c.members);
    w.put(",\"remote\":");
    ints(c.remote);
    w.put(",\"parent\":").put_u64(c.parent);
    w.put(",\"created_by\":").put_json_string(c.created_by.data(), c.created_by.size());
    w.put(",\"dims\":");
    ints(c.dims);
    w.put(",\"periods\":");
    ints(c.periods);
    w.put(",\"freed\":").put_bool(c.freed).put("}");
  });
  first = true;
  w.put("],\"windows\":[");
  complete &= d.windows.visit_signal_safe([&](const defs::WindowDef& x) {
    w.put(first ? "{\"id\":" : ",{\"id\":").put_u64(x.id);
    first = false;
    w.put(",\"comm\":").put_u64(x.comm).put(",\"members\":");
    ints(x.members);
    w.put(",\"created_by\":").put_json_string(x.created_by.data(), x.created_by.size());
    w.put(",\"freed\":").put_bool(x.freed).put("}");
  });
  w.put("],\"counter_names\":[");
  bool have_extra = d.visit_signal_safe(
      [&](const std::vector<std::string>& names, const defs::Instrumentation& in) {
        for (size_t i = 0; i < names.size(); ++i)
          w.put(i ? "," : "").put_json_string(names[i].data(), names[i].size());
        w.put("],\"instrumentation\":{\"gcc\":").put_bool(in.gcc).put(",\"xray\":").put_bool(in.xray);
        w.put(",\"instrumented\":").put_u64(in.instrumented).put(",\"patched\":").put_u64(in.patched);
        w.put(",\"unpatched\":").put_u64(in.unpatched).put(",\"filtered\":").put_u64(in.filtered);
        w.put(",\"auto_filtered\":").put_u64(in.auto_filtered);
        w.put(",\"sites_patched_out\":").put_u64(in.sites_patched_out).put("}");
      });
  if (!have_extra) w.put("]");
  complete &= have_extra;
  w.put(",\"notes\":[],\"partial\":{\"reason\":").put_json_string(reason, std::strlen(reason));
  w.put(",\"signal\":").put_u64(unsigned(sig)).put(",\"end_ticks\":").put_u64(end.ticks);
  w.put(",\"complete\":").put_bool(complete).put(",\"tail_chunks\":").put_u64(dump.tail_chunks);
  w.put(",\"tail_slots\":").put_u64(dump.tail_slots).put("}}\n");
  w.flush();
  return w.ok();
}

int open_out(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
}

// Writes the partial trace; `reason` as it goes into the JSON and the stderr line.
void write_partial(const char* reason, int sig) {
  runtime::disable_measurement();  // no new events from now on
  const clock::ClockPair end = clock::sample_pair(g_prep->timer);
  Writer line(2);
  line.put(g_prep->line_head.data(), g_prep->line_head.size()).put(reason);
  if (::mkdir(g_prep->trace_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    line.put(": cannot create ")
        .put(g_prep->trace_dir.c_str())
        .put(": ")
        .put(strerrorname_np(errno) ? strerrorname_np(errno) : "error");
    line.put("; what was recorded is lost\n");
    return;
  }
  // From now on the peers' tell_peers wait for this rank without signalling it (see there).
  const int marker_fd = open_out(g_prep->marker_path);
  if (marker_fd >= 0) ::close(marker_fd);
  const int chunk_fd = open_out(g_prep->chunk_path);
  const int tail_fd = open_out(g_prep->tail_path);
  const int json_fd = open_out(g_prep->json_tmp);
  runtime::PartialDump dump;
  bool ok = chunk_fd >= 0 && tail_fd >= 0 && json_fd >= 0;
  if (ok) {
    runtime::recorder_dump_partial(chunk_fd, tail_fd, dump);
    ok = write_json(json_fd, reason, sig, end, dump);
  }
  for (const int fd : {chunk_fd, tail_fd, json_fd})
    if (fd >= 0) ::close(fd);
  if (ok) ok = ::rename(g_prep->json_tmp.c_str(), g_prep->json_path.c_str()) == 0;
  if (!ok) {
    ::unlink(g_prep->json_tmp.c_str());
    line.put(": cannot write the partial trace to ").put(g_prep->trace_dir.c_str()).put("\n");
    return;
  }
  line.put(": partial trace (").put_u64(dump.stored.events).put(" events and ");
  line.put_u64(dump.tail_slots).put(" raw slots");
  if (!dump.complete) line.put(", some threads' data left out");
  line.put(")");
  line.put(g_prep->line_tail.data(), g_prep->line_tail.size());
}

// How many of the given files exist (the peers' markers or their finished dumps).
size_t count_existing(const std::vector<std::string>& paths) {
  size_t n = 0;
  struct stat st;
  for (const std::string& path : paths) n += ::stat(path.c_str(), &st) == 0;
  return n;
}

// The peers on this host dump too (fault.h): each that has not begun a dump of its own (no
// rank-<r>.dumping yet) gets kPeerSignal with this rank in its value; then this rank waits until
// every peer's rank-<r>.json exists, up to 3 s in all, so that they are written before MPICH's
// launcher SIGKILLs them (it does once this process dies). `from_exit`: this rank is leaving by
// exit(), so it first gives the peers up to kExitGraceSteps to begin dumping by themselves.
// When every rank returns from main without MPI_Finalize, they reach their exit handlers within
// milliseconds of each other, and asking them anyway (the signal woke the ranks already waiting
// here, which then left together) made MPICH's mpiexec return 1 instead of the ranks' own status
// in about 1 run in 30: hydra's proxy records a placeholder 1 for a process whose PMI socket it
// sees close after it has already collected its status (tests/mpi/faults/run_fault_test.py,
// OWN_STATUS). A peer that does not begin in time (it waits in an MPI call) is asked as before.
void tell_peers(bool from_exit) {
  if (!g_prep || g_prep->peers.empty()) return;
  const timespec step = {0, 10000000};
  for (int i = 0; from_exit && i < kExitGraceSteps; ++i) {
    if (count_existing(g_prep->peer_marker) == g_prep->peers.size()) break;
    nanosleep(&step, nullptr);
  }
  sigval v;
  v.sival_int = g_prep->rank;
  size_t told = 0;
  for (size_t i = 0; i < g_prep->peers.size(); ++i) {
    struct stat st;
    // A peer dumping already is waited for, not signalled.
    const bool dumping = ::stat(g_prep->peer_marker[i].c_str(), &st) == 0;
    told += dumping || sigqueue(g_prep->peers[i].pid, kPeerSignal, v) == 0;
  }
  if (told == 0) return;
  for (int i = 0; i < 300 && count_existing(g_prep->peer_json) < g_prep->peer_json.size(); ++i)
    nanosleep(&step, nullptr);
}

// Writes the partial trace once per process; a second caller (another thread's fault) waits
// for the first to finish, up to 30 s. `tell`: this rank's own fault, so the peers on this host
// are asked to dump theirs (not when the dump is itself a peer's request); `from_exit`: the
// fault is exit() without MPI_Finalize (tell_peers).
void dump_once(const char* reason, int sig, bool tell = true, bool from_exit = false) {
  if (!g_armed.load() || !g_prep || getpid() != g_pid) return;
  const runtime::Phase phase = runtime::current_phase();
  if (phase != runtime::Phase::kRecording && phase != runtime::Phase::kPaused &&
      phase != runtime::Phase::kDisabled)
    return;
  int idle = 0;
  if (g_dump_state.compare_exchange_strong(idle, 1)) {
    g_dumper.store(this_thread());
    write_partial(reason, sig);
    g_dump_state.store(2);
    if (tell) tell_peers(from_exit);
    return;
  }
  if (g_dumper.load() == this_thread()) return;  // a fault inside the dump itself
  for (int i = 0; i < 3000 && g_dump_state.load() == 1; ++i) {
    const timespec ms = {0, 10000000};
    nanosleep(&ms, nullptr);
  }
}

void on_signal(int sig, siginfo_t* info, void*) {
  const int saved_errno = errno;
  dump_once(signal_name(sig), sig);
  // The original disposition takes over. A fault the hardware raised happens again when the
  // handler returns (same instruction, same siginfo for the original handler); a signal that
  // was sent is sent again, and arrives once this handler has returned.
  sigaction(sig, &g_old[sig], nullptr);
  g_installed[sig] = false;
  const bool hardware = (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL) &&
                        info != nullptr && info->si_code > 0;
  if (!hardware) raise(sig);
  errno = saved_errno;
}

// No handler of the application's or the MPI library's: kPeerSignal may be ours.
bool default_or_ignored(const struct sigaction& a) {
  return !(a.sa_flags & SA_SIGINFO) && (a.sa_handler == SIG_DFL || a.sa_handler == SIG_IGN);
}

// A peer on this host faulted (tell_peers): dump, and let the application go on (untraced);
// its own end follows, usually the launcher's SIGKILL. Anything else that raises kPeerSignal
// (the kernel for a socket's out-of-band data, another process) is ignored, as the default
// disposition would: only a sigqueue() from a known peer's process counts.
void on_peer_signal(int, siginfo_t* info, void*) {
  const int saved_errno = errno;
  bool from_peer = false;
  if (info != nullptr && info->si_code == SI_QUEUE && g_prep != nullptr)
    for (const FaultPeer& p : g_prep->peers) from_peer = from_peer || p.pid == info->si_pid;
  if (from_peer && g_armed.load()) {
    static const char kHead[] = "stopped at rank ";
    size_t n = sizeof kHead - 1;
    std::memcpy(g_peer_reason, kHead, n);
    const int r = info->si_value.sival_int;
    n += runtime::sigsafe::format_u64(g_peer_reason + n, uint64_t(r < 0 ? 0 : r));
    std::memcpy(g_peer_reason + n, "'s fault", 9);
    dump_once(g_peer_reason, 0, /*tell=*/false);
  }
  errno = saved_errno;
}

void on_exit_handler(int status, void*) {
  if (!g_armed.load()) return;
  char reason[64] = "exit(";
  size_t n = std::strlen(reason);
  if (status < 0) reason[n++] = '-';
  n += runtime::sigsafe::format_u64(reason + n, uint64_t(status < 0 ? -int64_t(status) : status));
  std::memcpy(reason + n, ") without MPI_Finalize", 23);
  dump_once(reason, 0, /*tell=*/true, /*from_exit=*/true);
}

// An alternate stack for the MPI_Init thread, so that a stack overflow there can still be
// handled; kept when the application or the MPI library installed one.
void ensure_alt_stack() {
  stack_t cur;
  if (sigaltstack(nullptr, &cur) != 0 || !(cur.ss_flags & SS_DISABLE)) return;
  const size_t size = 256 * 1024;
  void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return;
  stack_t st = {};
  st.ss_sp = mem;
  st.ss_size = size;
  if (sigaltstack(&st, nullptr) != 0) munmap(mem, size);
}

}  // namespace

void fault_arm(const RunInfo& run) {
  if (run.output_dir.empty()) return;
  try {
    auto* p = new Prepared;
    p->trace_dir = run.output_dir + "/trace";
    const std::string base = p->trace_dir + "/rank-" + std::to_string(run.rank);
    p->chunk_path = base + ".cptrace";
    p->tail_path = base + ".tail";
    p->json_path = base + ".json";
    p->json_tmp = base + ".json.tmp";
    p->marker_path = base + ".dumping";
    p->json_prefix = archive_prefix(run);
    p->timer = run.timer;
    p->line_head = "critpath: rank " + std::to_string(run.rank) + ": ";
    p->line_tail = " in " + p->trace_dir + "; critpath-analyze " + run.output_dir +
                   " reports what was recorded before the fault\n";
    p->rank = run.rank;
    if (p->json_prefix.empty()) {
      delete p;
      return;
    }
    g_prep = p;
  } catch (...) {
    return;
  }
  ::unlink(g_prep->marker_path.c_str());  // a marker left by an earlier run in this directory
  g_pid = getpid();
  ensure_alt_stack();
  for (const int sig : kSignals) {
    struct sigaction old = {};
    if (sigaction(sig, nullptr, &old) != 0) continue;
    const bool has_handler = (old.sa_flags & SA_SIGINFO) ||
                             (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;
    // The application's own SIGTERM/SIGINT handler may shut down cleanly (and finalize).
    if ((sig == SIGTERM || sig == SIGINT) && has_handler) continue;
    struct sigaction sa = {};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigfillset(&sa.sa_mask);  // nothing else interrupts the dump
    g_old[sig] = old;
    if (sigaction(sig, &sa, nullptr) == 0) g_installed[sig] = true;
  }
  // The peers' request (tell_peers): only over the default disposition (ignore) or SIG_IGN,
  // never over an application's handler.
  struct sigaction old = {};
  if (sigaction(kPeerSignal, nullptr, &old) == 0 && default_or_ignored(old)) {
    struct sigaction sa = {};
    sa.sa_sigaction = on_peer_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigfillset(&sa.sa_mask);
    g_old_peer = old;
    g_peer_installed = sigaction(kPeerSignal, &sa, nullptr) == 0;
  }
  g_armed.store(true);
}

bool fault_peer_signal_free() {
  struct sigaction old = {};
  return sigaction(kPeerSignal, nullptr, &old) == 0 && default_or_ignored(old);
}

void fault_set_peers(const std::vector<FaultPeer>& peers) {
  if (!g_prep) return;
  try {
    std::vector<std::string> json, marker;
    for (const FaultPeer& p : peers) {
      json.push_back(g_prep->trace_dir + "/rank-" + std::to_string(p.rank) + ".json");
      marker.push_back(g_prep->trace_dir + "/rank-" + std::to_string(p.rank) + ".dumping");
    }
    g_prep->peer_json = std::move(json);
    g_prep->peer_marker = std::move(marker);
    g_prep->peers = peers;
  } catch (...) {
    g_prep->peers.clear();  // no peers told: as before
    g_prep->peer_json.clear();
    g_prep->peer_marker.clear();
  }
}

void fault_disarm() {
  if (!g_armed.exchange(false)) return;
  for (const int sig : kSignals) {
    if (!g_installed[sig]) continue;
    struct sigaction cur = {};
    // Only ours is replaced: a handler the application installed since stays.
    if (sigaction(sig, nullptr, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_signal)
      sigaction(sig, &g_old[sig], nullptr);
    g_installed[sig] = false;
  }
  if (g_peer_installed) {
    struct sigaction cur = {};
    if (sigaction(kPeerSignal, nullptr, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
        cur.sa_sigaction == on_peer_signal)
      sigaction(kPeerSignal, &g_old_peer, nullptr);
    g_peer_installed = false;
  }
}

void fault_abort(int errorcode) {
  char reason[64] = "MPI_Abort(errorcode ";
  size_t n = std::strlen(reason);
  if (errorcode < 0) reason[n++] = '-';
  n += runtime::sigsafe::format_u64(reason + n, uint64_t(errorcode < 0 ? -int64_t(errorcode) : errorcode));
  reason[n++] = ')';
  reason[n] = '\0';
  dump_once(reason, 0);
}

void fault_install_exit_handler() { on_exit(on_exit_handler, nullptr); }

uint64_t fault_host_key() {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  auto mix = [&h](const char* p, size_t n) {
    for (size_t i = 0; i < n; ++i) h = (h ^ uint8_t(p[i])) * 1099511628211ull;
    h = (h ^ 0xffu) * 1099511628211ull;  // separator
  };
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  mix(buf, std::strlen(buf));
  std::memset(buf, 0, sizeof buf);
  const int fd = ::open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n > 0) mix(buf, size_t(n));
  }
  std::memset(buf, 0, sizeof buf);
  const ssize_t n = ::readlink("/proc/self/ns/pid", buf, sizeof buf - 1);
  if (n > 0) mix(buf, size_t(n));
  return h;
}

}  // namespace critpath::analyzer
