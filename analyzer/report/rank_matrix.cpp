// critpath — analyzer/report/rank_matrix.cpp (see rank_matrix.h)
#include "analyzer/report/rank_matrix.h"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "analyzer/engine/atomic_file.h"
#include "analyzer/engine/profile.h"

namespace critpath::analyzer {
namespace {

constexpr const char* kMatrixFile = "rank_matrix.zst";
constexpr const char* kIndexFile = "rank_matrix.json";
static_assert(std::endian::native == std::endian::little, "the matrix is written as little-endian float64");

// This rank's block, metric after metric, compressed into one zstd frame; empty on failure.
std::vector<unsigned char> compress_block(const std::vector<engine::RankDetail>& mine) {
  std::vector<double> block;
  for (const engine::RankDetail& d : mine) block.insert(block.end(), d.values.begin(), d.values.end());
  const size_t bytes = block.size() * sizeof(double);
  std::vector<unsigned char> frame(ZSTD_compressBound(bytes));
  const size_t n = ZSTD_compress(frame.data(), frame.size(), block.data(), bytes, 3);
  if (ZSTD_isError(n)) return {};
  frame.resize(n);
  return frame;
}

// Writes all of `frame` at `offset` of the file `path` (created if missing); false on failure.
bool pwrite_all(const std::string& path, const std::vector<unsigned char>& frame, uint64_t offset,
                bool truncate) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0644);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < frame.size()) {
    const ssize_t w = ::pwrite(fd, frame.data() + done, frame.size() - done, off_t(offset + done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += size_t(w);
  }
  return ::close(fd) == 0 && done == frame.size();
}

}  // namespace

bool rank_matrix_wanted(const std::string& setting, int ranks) {
  if (setting == "true") return true;
  if (setting == "false") return false;
  return ranks <= kRankMatrixAutoRanks;
}

Status look_up_cells(const engine::Group& group, const std::vector<engine::RankDetail>& mine,
                     const std::string& id, std::vector<engine::ReducedMetric>& metrics) {
  std::vector<int> cells;  // (call path, rank) pairs
  if (group.is_root())
    for (const engine::ReducedMetric& m : metrics)
      for (const engine::PairedTop& p : m.paired) cells.insert(cells.end(), {p.callpath, p.rank});
  uint64_t n = cells.size();
  CRITPATH_FORWARD_IF_ERROR(group.broadcast(&n, 1));
  cells.resize(size_t(n));
  CRITPATH_FORWARD_IF_ERROR(group.broadcast(cells.data(), cells.size()));
  const std::vector<double>* own = nullptr;
  for (const engine::RankDetail& d : mine)
    if (d.id == id) own = &d.values;
  std::vector<double> values(cells.size() / 2, 0.0), sums;
  for (size_t i = 0; i < values.size(); ++i) {
    const int g = cells[2 * i], r = cells[2 * i + 1];
    if (own && r == group.rank() && g >= 0 && size_t(g) < own->size()) values[i] = (*own)[size_t(g)];
  }
  CRITPATH_FORWARD_IF_ERROR(group.reduce_to_root(values.data(), values.size(), engine::ReduceOp::kSum, sums));
  if (!group.is_root()) return Status::kOk;
  for (engine::ReducedMetric& m : metrics)
    if (m.id == id)
      for (size_t i = 0; i < sums.size(); ++i) m.cells.push_back({cells[2 * i], cells[2 * i + 1], sums[i]});
  return Status::kOk;
}

nlohmann::json rank_matrix_index(const std::vector<engine::RankDetail>& mine, int ranks,
                                 const GlobalProfile& profile) {
  nlohmann::json metrics = nlohmann::json::array(), callpaths = nlohmann::json::array();
  for (const engine::RankDetail& d : mine) metrics.push_back(d.id);
  for (const GlobalCallpath& c : profile.callpaths) callpaths.push_back(c.path);
  return {{"format", "critpath-rank-matrix/1"},
          {"file", kMatrixFile},
          {"ranks", ranks},
          {"dtype", "float64, little-endian"},
          {"layout", "one zstd frame per rank, in rank order; frame r holds rank r's values, metric after "
                     "metric in the order of `metrics`, each one value per call path in the order of "
                     "`callpaths`"},
          {"metrics", std::move(metrics)},
          {"callpaths", std::move(callpaths)}};
}

Status write_rank_matrix(const engine::Group& group, const std::vector<engine::RankDetail>& mine,
                         const std::string& dir, const GlobalProfile* profile, nlohmann::json& summary) {
  const std::string path = dir + "/" + kMatrixFile;
  const std::vector<unsigned char> frame = compress_block(mine);
  int ok = frame.empty() ? 0 : 1;
  // The root truncates before the scan: no other rank's offset is known before the root took
  // part in it, so no rank writes into the file before it is emptied.
  if (group.is_root() && ok) ok = pwrite_all(path, {}, 0, true) ? 1 : 0;
  uint64_t offset = 0;
  CRITPATH_FORWARD_IF_ERROR(group.exclusive_scan(frame.size(), offset));
  if (ok) ok = pwrite_all(path, frame, offset, false) ? 1 : 0;
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(&ok, 1, engine::ReduceOp::kMin));
  if (!group.is_root()) return ok ? Status::kOk : Status::kIoError;
  if (ok && profile != nullptr &&
      write_file_atomic(dir + "/" + kIndexFile,
                        rank_matrix_index(mine, group.size(), *profile).dump(1) + "\n") == Status::kOk) {
    summary = {{"file", kMatrixFile}, {"index", kIndexFile}};
    return Status::kOk;
  }
  ::unlink(path.c_str());
  return Status::kIoError;
}

}  // namespace critpath::analyzer
