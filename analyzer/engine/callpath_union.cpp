// critpath — analyzer/engine/callpath_union.cpp: the ranks' call trees merged up a binomial
// tree (see callpath_union.h).
#include "analyzer/engine/callpath_union.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace critpath::analyzer::engine {
namespace {

constexpr uint32_t kAutoFiltered = 0x100u;

template <typename T>
void put(std::vector<unsigned char>& b, T v) {
  const size_t at = b.size();
  b.resize(at + sizeof(T));
  std::memcpy(b.data() + at, &v, sizeof(T));
}

template <typename T>
T get(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// A node of serialize_tree's bytes at `p` (`end` the end of the bytes): false when none is
// left whole. Moves `p` past it.
bool next_node(const char*& p, const char* end, int32_t& parent, uint32_t& kind_word, std::string& name) {
  if (end - p <= 8) return false;  // 8 header bytes and a NUL-terminated name
  const void* nul = std::memchr(p + 8, '\0', size_t(end - p - 8));
  if (nul == nullptr) return false;
  parent = get<int32_t>(reinterpret_cast<const unsigned char*>(p));
  kind_word = get<uint32_t>(reinterpret_cast<const unsigned char*>(p + 4));
  name.assign(p + 8, static_cast<const char*>(nul));
  p = static_cast<const char*>(nul) + 1;
  return true;
}

// (parent, name) -> node of a union being built.
class PathIndex {
 public:
  // The node of (parent, name), or -1.
  int32_t find(int32_t parent, const std::string& name) {
    key(parent, name);
    const auto it = ids_.find(key_);
    return it == ids_.end() ? -1 : it->second;
  }
  void add(int32_t parent, const std::string& name, int32_t node) {
    key(parent, name);
    ids_.emplace(key_, node);
  }

 private:
  void key(int32_t parent, const std::string& name) {
    key_.assign(reinterpret_cast<const char*>(&parent), sizeof parent);
    key_ += name;
  }
  std::unordered_map<std::string, int32_t> ids_;
  std::string key_;
};

// Node `n` (its parent already mapped to `parent` in `out`) into `out`: a new node unless
// its call path is there; returns its index in `out`.
int32_t add_node(const CallpathUnion::Node& n, int32_t parent, PathIndex& index, CallpathUnion& out) {
  const int32_t found = index.find(parent, n.name);
  if (found >= 0) {
    out.nodes[size_t(found)].kind_word |= n.kind_word & kAutoFiltered;
    return found;
  }
  const int32_t id = int32_t(out.nodes.size());
  out.nodes.push_back(CallpathUnion::Node{parent, n.kind_word, n.first, n.name});
  index.add(parent, n.name, id);
  return id;
}

}  // namespace

CallpathUnion union_of_tree(const std::vector<char>& tree, int rank, int32_t counters) {
  CallpathUnion out;
  out.counters = counters;
  PathIndex index;
  std::vector<int32_t> to_union;
  const char* p = tree.data();
  const char* const end = p + tree.size();
  CallpathUnion::Node n;
  int32_t parent_local = -1;
  while (next_node(p, end, parent_local, n.kind_word, n.name)) {
    const size_t i = to_union.size();
    const int32_t parent = parent_local < 0 || size_t(parent_local) >= i ? -1
                                                                         : to_union[size_t(parent_local)];
    n.first = (uint64_t(uint32_t(rank)) << 32) | uint64_t(i);
    to_union.push_back(add_node(n, parent, index, out));
  }
  return out;
}

CallpathUnion merge_unions(const CallpathUnion& a, const CallpathUnion& b) {
  CallpathUnion out;
  out.counters = std::min(a.counters, b.counters);
  out.nodes.reserve(std::max(a.nodes.size(), b.nodes.size()));
  PathIndex index;
  std::vector<int32_t> from_a(a.nodes.size()), from_b(b.nodes.size());
  size_t i = 0, j = 0;
  // By first occurrence: a parent is met before its children, and of two nodes of one call
  // path the earlier one gives its kind.
  while (i < a.nodes.size() || j < b.nodes.size()) {
    const bool take_a = j == b.nodes.size() || (i < a.nodes.size() && a.nodes[i].first <= b.nodes[j].first);
    const CallpathUnion::Node& n = take_a ? a.nodes[i] : b.nodes[j];
    const std::vector<int32_t>& map = take_a ? from_a : from_b;
    const int32_t parent = n.parent < 0 ? -1 : map[size_t(n.parent)];
    const int32_t id = add_node(n, parent, index, out);
    (take_a ? from_a[i++] : from_b[j++]) = id;
  }
  return out;
}

void put_union(const CallpathUnion& u, bool with_first, std::vector<unsigned char>& out) {
  out.clear();
  put(out, u.counters);
  put(out, uint32_t(u.nodes.size()));
  for (const CallpathUnion::Node& n : u.nodes) {
    put(out, n.parent);
    put(out, n.kind_word);
    if (with_first) put(out, n.first);
    out.insert(out.end(), n.name.begin(), n.name.end());
    out.push_back('\0');
  }
}

bool get_union(const unsigned char* p, size_t n, bool with_first, CallpathUnion& out) {
  out = CallpathUnion{};
  if (n < 8) return false;
  const unsigned char* const end = p + n;
  out.counters = get<int32_t>(p);
  const uint32_t count = get<uint32_t>(p + 4);
  p += 8;
  const size_t header = with_first ? 16 : 8;
  for (uint32_t i = 0; i < count; ++i) {
    if (size_t(end - p) <= header) return false;
    const void* nul = std::memchr(p + header, '\0', size_t(end - p) - header);
    if (nul == nullptr) return false;
    CallpathUnion::Node node;
    node.parent = get<int32_t>(p);
    node.kind_word = get<uint32_t>(p + 4);
    if (with_first) node.first = get<uint64_t>(p + 8);
    if (node.parent >= int32_t(i) || node.parent < -1) return false;
    node.name.assign(reinterpret_cast<const char*>(p + header), static_cast<const char*>(nul));
    p = static_cast<const unsigned char*>(nul) + 1;
    out.nodes.push_back(std::move(node));
  }
  return p == end;
}

std::vector<int> map_tree(const std::vector<char>& tree, const CallpathUnion& all) {
  PathIndex index;
  for (size_t g = 0; g < all.nodes.size(); ++g) index.add(all.nodes[g].parent, all.nodes[g].name, int32_t(g));
  std::vector<int> out;
  const char* p = tree.data();
  const char* const end = p + tree.size();
  int32_t parent_local = -1;
  uint32_t kind_word = 0;
  std::string name;
  while (next_node(p, end, parent_local, kind_word, name)) {
    const size_t i = out.size();
    const bool has_parent = parent_local >= 0 && size_t(parent_local) < i;
    const int32_t parent = has_parent ? out[size_t(parent_local)] : -1;
    out.push_back(has_parent && parent < 0 ? -1 : index.find(parent, name));
  }
  return out;
}

Status reduce_union(const CallpathUnion& mine, const Comm& comm, double timeout_s, CallpathUnion& all) {
  const int rank = comm.rank(), size = comm.size();
  // Binomial tree: rank r receives from r + 2^k for every 2^k below its lowest set bit (all
  // of them for rank 0), then sends to r - (its lowest set bit).
  const int low = rank == 0 ? size : (rank & -rank);
  CallpathUnion acc = mine;
  std::vector<bool> heard(32, false);
  int children = 0;
  for (int m = 1; m < low && rank + m < size; m <<= 1) ++children;
  std::vector<unsigned char> bytes;
  for (int c = 0; c < children; ++c) {
    int src = -1;
    CRITPATH_FORWARD_IF_ERROR(comm.receive(src, bytes, timeout_s));
    const int m = src - rank;
    if (m <= 0 || m >= low || (m & (m - 1)) != 0 || heard[size_t(__builtin_ctz(unsigned(m)))])
      return Status::kMpiError;  // not a child of this rank, or one heard twice
    heard[size_t(__builtin_ctz(unsigned(m)))] = true;
    CallpathUnion theirs;
    if (!get_union(bytes.data(), bytes.size(), true, theirs)) return Status::kMpiError;
    acc = merge_unions(acc, theirs);
  }
  if (rank != 0) {
    put_union(acc, true, bytes);
    CRITPATH_FORWARD_IF_ERROR(comm.post(rank - low, std::move(bytes)));
  }
  // The tree's steps this rank waited through or fed: ceil(log2 P) on rank 0, fewer elsewhere.
  comm.count_rounds(uint64_t(children) + (rank != 0 ? 1 : 0));
  bytes.clear();
  if (rank == 0) put_union(acc, false, bytes);
  uint64_t n = bytes.size();
  CRITPATH_FORWARD_IF_ERROR(comm.bcast(&n, sizeof n, 0));
  bytes.resize(size_t(n));
  CRITPATH_FORWARD_IF_ERROR(comm.bcast(bytes.data(), bytes.size(), 0));
  if (!get_union(bytes.data(), bytes.size(), false, all)) return Status::kMpiError;
  return rank == 0 ? Status::kOk : comm.complete_posts(timeout_s);
}

}  // namespace critpath::analyzer::engine
