// critpath — compiler_hooks/counters.cpp: counter sources (counters.h).
#include "compiler_hooks/counters.h"

#include <ctime>

#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/log.h"

#ifdef CRITPATH_HAVE_PAPI
#include <papi.h>
#include <pthread.h>
#endif

namespace critpath::hooks::counters {

unsigned g_count = 0;
ReadFn g_read = nullptr;

namespace {

enum class Source : uint8_t { kTestNs, kTestReads, kPapi };

struct Active {
  Source source;
  int papi_index;  // position in the PAPI event set (kPapi)
};
Active g_active[trace::kMaxCounters];
unsigned g_papi_events = 0;
#ifdef CRITPATH_HAVE_PAPI
int g_papi_codes[trace::kMaxCounters];
#endif

// Per-thread state, trivially destructible (initial-exec TLS: no allocation on access).
struct CounterThread {
  uint64_t reads;
  int papi_set;
  uint8_t papi_state;  // 0 = not set up, 1 = running, 2 = failed on this thread
};
thread_local CounterThread t_ctr __attribute__((tls_model("initial-exec"))) = {0, -1, 0};

void note(const std::string& event, const std::string& why) {
  // The same cause would repeat on every rank: rank 0 speaks for the run.
  if (log::rank() <= 0)
    log::warn("CRITPATH_PAPI_EVENTS: %s is not measured (%s); measurement continues without it",
              event.c_str(), why.c_str());
}

#ifdef CRITPATH_HAVE_PAPI
// Creates and starts this thread's event set (cold: once per thread).
bool papi_thread_setup(CounterThread& c) {
  c.papi_state = 2;
  int set = PAPI_NULL;
  if (PAPI_create_eventset(&set) != PAPI_OK) return false;
  for (unsigned i = 0; i < g_papi_events; ++i)
    if (PAPI_add_event(set, g_papi_codes[i]) != PAPI_OK) return false;
  if (PAPI_start(set) != PAPI_OK) return false;
  c.papi_set = set;
  c.papi_state = 1;
  return true;
}
#endif

CRITPATH_NOINSTR bool read_all(uint64_t* v) {
  CounterThread& c = t_ctr;
  ++c.reads;
#ifdef CRITPATH_HAVE_PAPI
  long long pv[trace::kMaxCounters];
  if (g_papi_events > 0) {
    if (CRITPATH_UNLIKELY(c.papi_state != 1) && (c.papi_state == 2 || !papi_thread_setup(c))) return false;
    if (PAPI_read(c.papi_set, pv) != PAPI_OK) return false;
  }
#endif
  for (unsigned i = 0; i < g_count; ++i) {
    switch (g_active[i].source) {
      case Source::kTestNs: {
        timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        v[i] = uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
        break;
      }
      case Source::kTestReads: v[i] = c.reads; break;
      case Source::kPapi:
#ifdef CRITPATH_HAVE_PAPI
        v[i] = uint64_t(pv[g_active[i].papi_index]);
#else
        v[i] = 0;
#endif
        break;
    }
  }
  return true;
}

std::vector<std::string> split(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    const size_t c = s.find(',');
    std::string_view w = s.substr(0, c);
    while (!w.empty() && (w.front() == ' ' || w.front() == '\t')) w.remove_prefix(1);
    while (!w.empty() && (w.back() == ' ' || w.back() == '\t')) w.remove_suffix(1);
    if (!w.empty()) out.emplace_back(w);
    s.remove_prefix(c == std::string_view::npos ? s.size() : c + 1);
  }
  return out;
}

}  // namespace

std::vector<std::string> start(std::string_view events) {
  std::vector<std::string> names;
  g_count = 0;
  g_papi_events = 0;
  std::vector<std::string> papi_wanted;
  for (const std::string& e : split(events)) {
    bool dup = false;
    for (const auto& n : names) dup = dup || n == e;
    for (const auto& n : papi_wanted) dup = dup || n == e;
    if (dup) continue;
    if (names.size() + papi_wanted.size() >= trace::kMaxCounters) {
      note(e, "at most 16 events are supported");
      continue;
    }
    if (e == "CRITPATH_TEST_NS" || e == "CRITPATH_TEST_READS") {
      g_active[names.size()] = {e == "CRITPATH_TEST_NS" ? Source::kTestNs : Source::kTestReads, -1};
      names.push_back(e);
    } else {
      papi_wanted.push_back(e);
    }
  }
  if (!papi_wanted.empty()) {
#ifdef CRITPATH_HAVE_PAPI
    const int v = PAPI_library_init(PAPI_VER_CURRENT);
    std::string why;
    if (v != PAPI_VER_CURRENT) {
      why = v > 0 ? "PAPI version mismatch" : std::string("PAPI_library_init failed: ") + PAPI_strerror(v);
    } else if (PAPI_thread_init(reinterpret_cast<unsigned long (*)()>(pthread_self)) != PAPI_OK) {
      why = "PAPI_thread_init failed";
    } else if (PAPI_num_components() <= 0 || PAPI_num_cmp_hwctrs(0) <= 0) {
      why = "this machine exposes no hardware counters to PAPI";
    }
    if (!why.empty()) {
      for (const auto& e : papi_wanted) note(e, why);
    } else {
      // Try each event on a probe set so one bad event does not take the others down.
      int probe = PAPI_NULL;
      PAPI_create_eventset(&probe);
      for (const auto& e : papi_wanted) {
        int code = 0;
        int rc = PAPI_event_name_to_code(const_cast<char*>(e.c_str()), &code);
        if (rc != PAPI_OK) {
          note(e, std::string("unknown to PAPI: ") + PAPI_strerror(rc));
          continue;
        }
        rc = PAPI_add_event(probe, code);
        if (rc != PAPI_OK) {
          note(e, std::string("PAPI cannot count it here: ") + PAPI_strerror(rc));
          continue;
        }
        g_papi_codes[g_papi_events] = code;
        g_active[names.size()] = {Source::kPapi, int(g_papi_events)};
        ++g_papi_events;
        names.push_back(e);
      }
      if (probe != PAPI_NULL) {
        PAPI_cleanup_eventset(probe);
        PAPI_destroy_eventset(&probe);
      }
      // The calling thread's set must start, or the events are useless everywhere.
      if (g_papi_events > 0 && !papi_thread_setup(t_ctr)) {
        std::vector<std::string> kept;
        for (unsigned i = 0; i < names.size(); ++i) {
          if (g_active[i].source == Source::kPapi) {
            note(names[i], "PAPI_start failed");
          } else {
            g_active[kept.size()] = g_active[i];
            kept.push_back(names[i]);
          }
        }
        g_papi_events = 0;
        names = kept;
      }
    }
#else
    for (const auto& e : papi_wanted) note(e, "critpath was built without PAPI");
#endif
  }
  g_read = read_all;
  g_count = unsigned(names.size());
  defs::set_counter_names(names);
  return names;
}

void stop() { g_count = 0; }

void install_for_testing(std::vector<std::string> names, ReadFn fn) {
  if (names.size() > trace::kMaxCounters) names.resize(trace::kMaxCounters);
  g_read = fn;
  g_count = fn ? unsigned(names.size()) : 0;
  defs::set_counter_names(std::move(names));
}

}  // namespace critpath::hooks::counters
