// critpath — libtrace/defs/definitions.cpp: region, communicator and window tables.
#include "libtrace/defs/definitions.h"

#include <string>

#include "libtrace/runtime/sigsafe.h"

namespace critpath::defs {

namespace {
RegionDef make_def(uint32_t id, std::string name, RegionKind kind, std::string file = {}, uint32_t line = 0) {
  RegionDef d;
  d.id = id;
  d.name = std::move(name);
  d.kind = kind;
  d.file = std::move(file);
  d.line = line;
  return d;
}
}  // namespace

const char* to_string(RegionKind k) {
  switch (k) {
    case RegionKind::kUser: return "user";
    case RegionKind::kFunction: return "function";
    case RegionKind::kMpi: return "mpi";
    case RegionKind::kArtificial: return "artificial";
    case RegionKind::kCallsite: return "callsite";
  }
  return "unknown";
}

RegionTable::RegionTable() { define_fixed(kRootRegion, "main", RegionKind::kArtificial); }

uint32_t RegionTable::define(std::string_view name, RegionKind kind, std::string_view file, uint32_t line) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string key(name);
  auto it = by_name_.find(key);
  if (it != by_name_.end()) return it->second;
  const uint32_t id = next_++;
  by_name_.emplace(key, id);
  by_id_.emplace(id, make_def(id, std::move(key), kind, std::string(file), line));
  return id;
}

void RegionTable::define_fixed(uint32_t id, std::string_view name, RegionKind kind, MpiSemantics mpi) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_id_.find(id);
  if (it != by_id_.end()) {
    if (it->second.mpi == MpiSemantics{}) it->second.mpi = mpi;
    return;
  }
  std::string key(name);
  RegionDef def = make_def(id, key, kind);
  def.mpi = mpi;
  by_id_.emplace(id, std::move(def));
  // Fixed ids win name lookups only when no dynamic region of that name exists yet; a user
  // region called "main" stays distinct from the artificial root.
  if (kind != RegionKind::kArtificial) by_name_.emplace(std::move(key), id);
}

const char* RegionTable::stable_name(uint32_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second.name.c_str();
}

RegionDef RegionTable::get(uint32_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_id_.find(id);
  if (it != by_id_.end()) return it->second;
  return make_def(id, "region#" + std::to_string(id), RegionKind::kUser);
}

MpiSemantics RegionTable::mpi(uint32_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_id_.find(id);
  return it == by_id_.end() ? MpiSemantics{} : it->second.mpi;
}

std::vector<RegionDef> RegionTable::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<RegionDef> out;
  out.reserve(by_id_.size());
  for (const auto& [id, def] : by_id_) out.push_back(def);
  return out;
}

void RegionTable::rename(uint32_t id, std::string_view name, std::string_view file, uint32_t line) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return;
  RegionDef& d = it->second;
  auto old = by_name_.find(d.name);
  if (old != by_name_.end() && old->second == id) by_name_.erase(old);
  d.name.assign(name.data(), name.size());
  d.file.assign(file.data(), file.size());
  d.line = line;
  by_name_.emplace(d.name, id);  // keeps an existing owner of the name
}

void RegionTable::add_unrecorded(uint32_t id, uint64_t visits, uint64_t ticks, bool auto_filtered) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return;
  it->second.unrecorded_visits += visits;
  it->second.unrecorded_ticks += ticks;
  it->second.auto_filtered = it->second.auto_filtered || auto_filtered;
}

void Definitions::set_counter_names(std::vector<std::string> names) {
  std::lock_guard<std::mutex> lock(counter_mu_);
  counter_names_ = std::move(names);
}

std::vector<std::string> Definitions::counter_names() const {
  std::lock_guard<std::mutex> lock(counter_mu_);
  return counter_names_;
}

void Definitions::set_instrumentation(const Instrumentation& info) {
  std::lock_guard<std::mutex> lock(counter_mu_);
  instrumentation_ = info;
}

Instrumentation Definitions::instrumentation() const {
  std::lock_guard<std::mutex> lock(counter_mu_);
  return instrumentation_;
}

bool try_lock_signal_safe(std::mutex& m) { return runtime::sigsafe::lock(m); }

Definitions& current() {
  static Definitions* instance = new Definitions;  // never destroyed: used during exit
  return *instance;
}

RegionTable& regions() { return current().regions; }
CommTable& comms() { return current().comms; }
WindowTable& windows() { return current().windows; }
void set_counter_names(std::vector<std::string> names) { current().set_counter_names(std::move(names)); }
std::vector<std::string> counter_names() { return current().counter_names(); }
void set_instrumentation(const Instrumentation& info) { current().set_instrumentation(info); }

}  // namespace critpath::defs
