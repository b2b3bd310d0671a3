// critpath — analyzer/session/trace_archive.cpp
#include "analyzer/session/trace_archive.h"

#include <sys/stat.h>

#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/log.h"
#include "pmpi_wrappers/generated_regions.h"

namespace critpath::analyzer {

using nlohmann::json;

namespace {

json pair_json(const clock::ClockPair& p) { return {{"ticks", p.ticks}, {"ns", p.ns}}; }
clock::ClockPair pair_from(const json& j) {
  return {j.at("ticks").get<uint64_t>(), j.at("ns").get<uint64_t>()};
}
json offset_json(const OffsetSample& o) {
  return {{"local_ns", o.local_ns}, {"offset_ns", o.offset_ns}, {"rtt_ns", o.rtt_ns}};
}
OffsetSample offset_from(const json& j) {
  return {j.at("local_ns").get<double>(), j.at("offset_ns").get<double>(), j.at("rtt_ns").get<double>()};
}
// Format 2 added the regions' MPI semantics ("mpi"); format 1 archives lack them and the
// analyzer no longer derives them from names, so they are refused (re-record the trace).
// Format 3 leaves out the MPI regions exactly as the spec defines them (pmpi_wrappers/spec/
// mpi.toml, generated_regions.h: the same id, name and semantics, no file, line or unrecorded
// visits) when "regions_from_spec" is true: the reader defines the spec's table for the ids
// not listed. In bench_wavefront that is 144 of a rank's 146 regions and 25 of its 27 KB;
// building and parsing them was most of a kept rank's cost (the hosted in-situ analysis writes
// and reads every rank's: session/hosted.h). Format 2 archives, which list every region, are
// still read.
constexpr const char* kFormat = "critpath-archive/3";
constexpr const char* kFormatListingAll = "critpath-archive/2";

// The spec's entry of MPI region `id`, nullptr when it has none.
const pmpi::GeneratedRegion* spec_region(uint32_t id) {
  static const auto* by_id = [] {
    auto* m = new std::unordered_map<uint32_t, const pmpi::GeneratedRegion*>;
    for (const pmpi::GeneratedRegion& r : pmpi::generated_regions()) (*m)[r.id] = &r;
    return m;
  }();
  const auto it = by_id->find(id);
  return it == by_id->end() ? nullptr : it->second;
}

// Whether the spec's table, defined by the reader, gives `d` as it is.
bool as_in_spec(const defs::RegionDef& d) {
  if (d.kind != defs::RegionKind::kMpi || !d.file.empty() || d.line != 0 || d.unrecorded_visits != 0 ||
      d.unrecorded_ticks != 0 || d.auto_filtered)
    return false;
  const pmpi::GeneratedRegion* r = spec_region(d.id);
  return r != nullptr && d.name == r->name && d.mpi == r->mpi;
}

json mpi_json(const defs::MpiSemantics& m) {
  return {int(m.cls), int(m.sync), int(m.root), int(m.completion), int(m.lifecycle), int(m.rma)};
}
defs::MpiSemantics mpi_from(const json& j) {
  defs::MpiSemantics m;
  m.cls = defs::MpiClass(j.at(0).get<int>());
  m.sync = defs::MpiSync(j.at(1).get<int>());
  m.root = defs::MpiRoot(j.at(2).get<int>());
  m.completion = defs::MpiCompletion(j.at(3).get<int>());
  m.lifecycle = defs::MpiLifecycle(j.at(4).get<int>());
  // The sixth entry (rma) came later in format 2: older archives' one-sided calls count as
  // synchronization (mpi_rma_sync) and their RMA wait states are not searched.
  if (j.size() > 5) m.rma = defs::MpiRma(j.at(5).get<int>());
  return m;
}

std::string path_of(const std::string& dir, int rank) {
  return dir + "/rank-" + std::to_string(rank) + ".json";
}

json run_json(const RunInfo& run) {
  return {{"rank", run.rank},
          {"size", run.size},
          {"thread_level", run.thread_level},
          {"executable", run.executable},
          {"args", run.args},
          {"output_dir", run.output_dir},
          {"start_utc", run.start_utc},
          {"mpi_library", run.mpi_library},
          {"timer_why", run.timer_why},
          {"timer", int(run.timer)},
          {"begin", pair_json(run.begin)},
          {"end", pair_json(run.end)},
          {"init_enter_ticks", run.init_enter_ticks},
          {"finalize_enter_ticks", run.finalize_enter_ticks},
          {"skew",
           {{"offset_s", run.skew.offset_s},
            {"drift", run.skew.drift},
            {"origin_ns", run.skew.origin_ns},
            {"event_jump_s", run.skew.event_jump_s},
            {"active", run.skew.active}}},
          {"clock_linear", run.clock_linear},
          {"init_offset", offset_json(run.init_offset)},
          {"fin_offset", offset_json(run.fin_offset)},
          {"same_host_as_root", run.same_host_as_root},
          {"all_on_one_host", run.all_on_one_host},
          {"host", run.host},
          {"cpus", run.cpus}};
}

// load_archive's steps: the run facts, then the definitions, of one rank-<r>.json.
void run_from(const json& j, RunInfo& run) {
  const json& r = j.at("run");
  run.rank = r.at("rank");
  run.size = r.at("size");
  run.thread_level = r.at("thread_level");
  run.executable = r.at("executable");
  run.args = r.at("args").get<std::vector<std::string>>();
  run.output_dir = r.at("output_dir");
  run.start_utc = r.at("start_utc");
  run.mpi_library = r.at("mpi_library");
  run.timer_why = r.at("timer_why");
  run.timer = clock::TimerKind(r.at("timer").get<int>());
  run.begin = pair_from(r.at("begin"));
  run.end = pair_from(r.at("end"));
  run.conv = clock::TickConverter(run.timer, run.begin, run.end);
  run.init_enter_ticks = r.at("init_enter_ticks");
  run.finalize_enter_ticks = r.at("finalize_enter_ticks");
  const json& sk = r.at("skew");
  run.skew.offset_s = sk.at("offset_s");
  run.skew.drift = sk.at("drift");
  run.skew.origin_ns = sk.at("origin_ns");
  run.skew.event_jump_s = sk.value("event_jump_s", 0.0);
  run.skew.active = sk.at("active");
  run.clock_linear = r.at("clock_linear");
  run.init_offset = offset_from(r.at("init_offset"));
  run.fin_offset = offset_from(r.at("fin_offset"));
  run.same_host_as_root = r.at("same_host_as_root");
  run.all_on_one_host = r.at("all_on_one_host");
  run.host = r.value("host", std::string());
  run.cpus = r.value("cpus", std::vector<int>());
  const json& rs = j.at("recorder");
  run.recorder.overhead_ticks_max_thread = rs.at("overhead_ticks_max_thread");
  run.recorder.overhead_ticks_total = rs.at("overhead_ticks_total");
  run.recorder.compress_ticks = rs.at("compress_ticks");
  run.recorder.inline_compressions = rs.at("inline_compressions");
  run.recorder.threads = rs.at("threads");
  run.recorder.raw_chunks_allocated = rs.at("raw_chunks_allocated");
  run.recorder.compress_errors = rs.at("compress_errors");
  const json& st = j.at("store");
  run.store.chunks = st.at("chunks");
  run.store.events = st.at("events");
  run.store.bytes_total = st.at("bytes_total");
  run.store.bytes_in_memory = st.at("bytes_in_memory");
  run.store.bytes_spilled = st.at("bytes_spilled");
  run.store.chunks_spilled = st.at("chunks_spilled");
  run.store.encoded_bytes = st.at("encoded_bytes");
  run.store.fingerprint = st.value("fingerprint", uint64_t(0));  // 0: an older archive
}

void definitions_from(const json& j, defs::Definitions& definitions) {
  for (const json& d : j.at("regions")) {
    const uint32_t id = d.at("id");
    definitions.regions.define_fixed(id, d.at("name").get<std::string>(),
                                     defs::RegionKind(d.at("kind").get<int>()),
                                     d.contains("mpi") ? mpi_from(d.at("mpi")) : defs::MpiSemantics{});
    definitions.regions.rename(id, d.at("name").get<std::string>(), d.at("file").get<std::string>(),
                               d.at("line").get<uint32_t>());
    if (d.at("unrecorded_visits").get<uint64_t>() || d.at("auto_filtered").get<bool>())
      definitions.regions.add_unrecorded(id, d.at("unrecorded_visits"), d.at("unrecorded_ticks"),
                                         d.at("auto_filtered"));
  }
  // The spec's MPI regions the archive left out (after the listed ones: the first definition
  // of an id stands).
  if (j.value("regions_from_spec", false))
    for (const pmpi::GeneratedRegion& r : pmpi::generated_regions())
      definitions.regions.define_fixed(r.id, r.name, defs::RegionKind::kMpi, r.mpi);
  for (const json& c : j.at("comms")) {
    defs::CommDef d;
    d.id = c.at("id");
    d.members = c.at("members").get<std::vector<int32_t>>();
    d.remote = c.at("remote").get<std::vector<int32_t>>();
    d.parent = c.at("parent");
    d.created_by = c.at("created_by");
    d.dims = c.at("dims").get<std::vector<int32_t>>();
    d.periods = c.at("periods").get<std::vector<int32_t>>();
    d.freed = c.at("freed");
    definitions.comms.define(std::move(d));
  }
  for (const json& w : j.value("windows", json::array())) {
    defs::WindowDef d;
    d.id = w.at("id");
    d.comm = w.at("comm");
    d.members = w.at("members").get<std::vector<int32_t>>();
    d.created_by = w.at("created_by");
    d.freed = w.at("freed");
    definitions.windows.define(std::move(d));
  }
  definitions.set_counter_names(j.at("counter_names").get<std::vector<std::string>>());
  if (j.contains("instrumentation")) {  // archives of older versions lack it
    const json& x = j.at("instrumentation");
    defs::Instrumentation in;
    in.gcc = x.at("gcc");
    in.xray = x.at("xray");
    in.instrumented = x.at("instrumented");
    in.patched = x.at("patched");
    in.unpatched = x.at("unpatched");
    in.filtered = x.at("filtered");
    in.auto_filtered = x.at("auto_filtered");
    in.sites_patched_out = x.value("sites_patched_out", uint64_t(0));  // older archives lack it
    definitions.set_instrumentation(in);
  }
}

}  // namespace

std::string archive_prefix(const RunInfo& run) {
  try {
    json r = run_json(run);
    r.erase("end");
    r.erase("finalize_enter_ticks");
    r.erase("fin_offset");
    std::string text = json{{"format", kFormat}, {"run", r}}.dump(0, ' ', false,
                                                                  json::error_handler_t::replace);
    while (!text.empty() && text.back() != '}') text.pop_back();  // the outer object's
    if (!text.empty()) text.pop_back();
    while (!text.empty() && text.back() != '}') text.pop_back();  // the run object's
    if (!text.empty()) text.pop_back();
    return text;
  } catch (...) {
    return {};
  }
}

Status save_archive(const RunInfo& run, const defs::Definitions& definitions,
                    const std::vector<std::string>& notes, const std::string& dir) {
  try {
    json j;
    j["format"] = kFormat;
    j["run"] = run_json(run);
    const runtime::RecorderStats& r = run.recorder;
    j["recorder"] = {{"overhead_ticks_max_thread", r.overhead_ticks_max_thread},
                     {"overhead_ticks_total", r.overhead_ticks_total},
                     {"compress_ticks", r.compress_ticks},
                     {"inline_compressions", r.inline_compressions},
                     {"threads", r.threads},
                     {"raw_chunks_allocated", r.raw_chunks_allocated},
                     {"compress_errors", r.compress_errors}};
    const trace::ChunkStoreStats& st = run.store;
    j["store"] = {{"chunks", st.chunks},
                  {"events", st.events},
                  {"bytes_total", st.bytes_total},
                  {"bytes_in_memory", st.bytes_in_memory},
                  {"bytes_spilled", st.bytes_spilled},
                  {"chunks_spilled", st.chunks_spilled},
                  {"encoded_bytes", st.encoded_bytes},
                  {"fingerprint", st.fingerprint}};
    json regions = json::array();
    j["regions_from_spec"] = true;
    for (const defs::RegionDef& d : definitions.regions.snapshot()) {
      if (as_in_spec(d)) continue;
      regions.push_back({{"id", d.id},
                         {"name", d.name},
                         {"kind", int(d.kind)},
                         {"file", d.file},
                         {"line", d.line},
                         {"unrecorded_visits", d.unrecorded_visits},
                         {"unrecorded_ticks", d.unrecorded_ticks},
                         {"auto_filtered", d.auto_filtered}});
      // [class, sync, root, completion, lifecycle, rma] (libtrace/defs/definitions.h values)
      if (d.kind == defs::RegionKind::kMpi) regions.back()["mpi"] = mpi_json(d.mpi);
    }
    j["regions"] = std::move(regions);
    json comms = json::array();
    for (const defs::CommDef& c : definitions.comms.snapshot())
      comms.push_back({{"id", c.id},
                       {"members", c.members},
                       {"remote", c.remote},
                       {"parent", c.parent},
                       {"created_by", c.created_by},
                       {"dims", c.dims},
                       {"periods", c.periods},
                       {"freed", c.freed}});
    j["comms"] = std::move(comms);
    json windows = json::array();
    for (const defs::WindowDef& w : definitions.windows.snapshot())
      windows.push_back({{"id", w.id},
                         {"comm", w.comm},
                         {"members", w.members},
                         {"created_by", w.created_by},
                         {"freed", w.freed}});
    j["windows"] = std::move(windows);
    j["counter_names"] = definitions.counter_names();
    const defs::Instrumentation in = definitions.instrumentation();
    j["instrumentation"] = {{"gcc", in.gcc},
                            {"xray", in.xray},
                            {"instrumented", in.instrumented},
                            {"patched", in.patched},
                            {"unpatched", in.unpatched},
                            {"filtered", in.filtered},
                            {"auto_filtered", in.auto_filtered},
                            {"sites_patched_out", in.sites_patched_out}};
    j["notes"] = notes;
    std::ofstream f(path_of(dir, run.rank));
    f << j.dump(0, ' ', false, json::error_handler_t::replace) << "\n";
    return f.good() ? Status::kOk : Status::kIoError;
  } catch (...) {
    return Status::kIoError;
  }
}

Status save_trace(const LocationTrace& location, const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return Status::kIoError;
  CRITPATH_FORWARD_IF_ERROR(
      location.chunks->write_file(dir + "/rank-" + std::to_string(location.run.rank) + ".cptrace"));
  return save_archive(location.run, *location.definitions, location.notes, dir);
}

bool keeps_trace(const config::Config& cfg) { return cfg.keep_trace == "true" || cfg.keep_trace == "both"; }

Status load_archive(const std::string& dir, int rank, RunInfo& run, defs::Definitions& definitions,
                    std::vector<std::string>& notes) {
  try {
    std::ifstream f(path_of(dir, rank));
    if (!f) return Status::kIoError;
    const json j = json::parse(f);
    const std::string format = j.value("format", "");
    if (format != kFormat && format != kFormatListingAll) {
      log::warn("%s/rank-%d.json: format '%s' is not %s%s", dir.c_str(), rank, format.c_str(), kFormat,
                format == "critpath-archive/1"
                    ? " (written by an older critpath without MPI call semantics; re-record the trace)"
                    : "");
      return Status::kCorrupt;
    }
    run_from(j, run);
    definitions_from(j, definitions);
    notes = j.at("notes").get<std::vector<std::string>>();
    if (j.contains("partial")) {
      const json& p = j.at("partial");
      run.partial = p.at("reason").get<std::string>();
      run.partial_end_ticks = p.at("end_ticks").get<uint64_t>();
      run.partial_complete = p.value("complete", true);
      if (run.partial.empty()) run.partial = "a fault";
    }
    run.offline = true;
    return Status::kOk;
  } catch (const std::exception& e) {
    log::warn("%s/rank-%d.json: %s", dir.c_str(), rank, e.what());
    return Status::kCorrupt;
  } catch (...) {
    return Status::kCorrupt;
  }
}

}  // namespace critpath::analyzer
