// critpath — libtrace/buffer/chunk_store.cpp
//
// Third stage of the data flow: compressed chunks stay in memory up to the budget, then go
// to a per-rank spill file; the analysis reads them back in (location, sequence) order.
//
//   append() --under budget--> memory_[i]            ref.offset = i
//            --over budget---> pwrite(spill, end)    ref.offset = file offset
//            --spill failed--> memory_[i] anyway     (kIoError once, never dropped)
//            --out of memory-> nothing changed       (kNoMemory; the caller keeps the chunk)
//
// The spill file is a temporary owned by the store, unlinked as soon as it is created; a kept
// trace is a separate file written by write_file() and re-indexed by open_file().
#include "libtrace/buffer/chunk_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "libtrace/runtime/alloc_fault.h"
#include "libtrace/runtime/sigsafe.h"

namespace critpath::trace {
namespace {

// Creates every missing directory of `path`'s parent (mkdir -p). Failure shows up later,
// when the file itself cannot be opened.
void make_parent_dirs(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return;
  std::string dir = path.substr(0, slash);
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      const char saved = i < dir.size() ? dir[i] : '\0';
      if (i < dir.size()) dir[i] = '\0';
      ::mkdir(dir.c_str(), 0755);  // EEXIST and friends are fine here
      if (i < dir.size()) dir[i] = saved;
    }
  }
}

bool write_all_at(int fd, const uint8_t* data, size_t size, uint64_t offset) {
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, data, size, off_t(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) return false;
    data += n;
    size -= size_t(n);
    offset += uint64_t(n);
  }
  return true;
}

bool read_all_at(int fd, uint8_t* data, size_t size, uint64_t offset) {
  while (size > 0) {
    const ssize_t n = ::pread(fd, data, size, off_t(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) return false;  // file shorter than the index says
    data += n;
    size -= size_t(n);
    offset += uint64_t(n);
  }
  return true;
}

}  // namespace

ChunkStore::~ChunkStore() {
  if (spill_fd_ >= 0) {
    ::close(spill_fd_);
  }
}

void ChunkStore::configure(uint64_t memory_budget, std::string spill_path, uint64_t memory_cap) {
  std::lock_guard<std::mutex> lock(mu_);
  budget_ = memory_budget;
  memory_cap_ = memory_cap;
  // Once a spill (or kept) file is open its path must stay: the destructor unlinks it.
  if (spill_fd_ < 0) spill_path_ = std::move(spill_path);
}

int ChunkStore::spill_errno() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spill_errno_;
}

int ChunkStore::probe_spill(const std::string& spill_path, size_t bytes) {
  // Side-effect free: nothing is created (the directory appears at the first spill). The
  // nearest existing ancestor of the file must be a writable directory on a writable file
  // system with room for `bytes`.
  std::string dir = spill_path.substr(0,
                                      spill_path.rfind('/') == std::string::npos ? 0 : spill_path.rfind('/'));
  if (dir.empty()) dir = ".";
  struct stat st;
  while (::stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) return errno;
    const size_t slash = dir.rfind('/');
    if (slash == std::string::npos) {
      dir = ".";
    } else {
      dir = slash == 0 ? "/" : dir.substr(0, slash);
    }
    if (dir == "/" || dir == ".") {
      if (::stat(dir.c_str(), &st) != 0) return errno;
      break;
    }
  }
  if (!S_ISDIR(st.st_mode)) return ENOTDIR;
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return errno;
  struct statvfs fs;
  if (::statvfs(dir.c_str(), &fs) == 0) {
    if (fs.f_flag & ST_RDONLY) return EROFS;
    if (uint64_t(fs.f_bavail) * uint64_t(fs.f_frsize) < bytes) return ENOSPC;
  }
  return 0;
}

Status ChunkStore::append(std::vector<uint8_t>&& chunk) {
  // The boundary of the store's cold path: nothing throws out of here. Every allocation
  // happens (reserve) before the first change, so a failure leaves the store as it was and
  // the chunk with the caller.
  try {
    return append_or_throw(std::move(chunk));
  } catch (...) {
    return Status::kNoMemory;
  }
}

Status ChunkStore::append_or_throw(std::vector<uint8_t>&& chunk) {
  runtime::alloc_fault_point(runtime::AllocSite::kStore);
  ChunkRef ref;
  CRITPATH_FORWARD_IF_ERROR(read_header(chunk.data(), chunk.size(), ref.header));
  if (chunk.size() != kChunkHeaderSize + size_t(ref.header.payload_size)) return Status::kCorrupt;
  ref.size = uint32_t(chunk.size());

  std::lock_guard<std::mutex> lock(mu_);
  refs_.reserve(refs_.size() + 1);
  memory_.reserve(memory_.size() + 1);
  Status result = Status::kOk;
  const bool over_budget = stats_.bytes_in_memory + ref.size > budget_;
  // No spill file to take it: memory up to the cap, then refused (the recorder stops).
  if (over_budget && (spill_failed_ || spill_path_.empty()) && spill_fd_ < 0 &&
      stats_.bytes_in_memory + ref.size > memory_cap_)
    return Status::kNoMemory;
  if (over_budget && !spill_failed_ && (spill_fd_ >= 0 || !spill_path_.empty())) {
    if (spill_fd_ < 0) {
      make_parent_dirs(spill_path_);
      spill_fd_ = ::open(spill_path_.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600);
      // Unlinked at once: the file lives as long as the descriptor, so a crash, a kill or a
      // store that is never destroyed (the runtime's) leaves nothing behind on disk.
      if (spill_fd_ >= 0) ::unlink(spill_path_.c_str());
      else spill_errno_ = errno;
    }
    if (spill_fd_ >= 0 && write_all_at(spill_fd_, chunk.data(), chunk.size(), spill_end_)) {
      ref.spilled = true;
      ref.offset = spill_end_;
      spill_end_ += ref.size;
    } else {
      // Spilling is broken for good (no space, no permission): from now on every chunk
      // stays in memory. Chunks already in the file remain readable through spill_fd_.
      if (spill_errno_ == 0) spill_errno_ = errno != 0 ? errno : ENOSPC;
      spill_failed_ = true;
      result = Status::kIoError;
    }
  }
  if (ref.spilled) {
    stats_.bytes_spilled += ref.size;
    stats_.chunks_spilled += 1;
  } else {
    ref.offset = memory_.size();
    memory_.push_back(std::move(chunk));
    stats_.bytes_in_memory += ref.size;
  }
  stats_.chunks += 1;
  stats_.events += ref.header.event_count;
  stats_.bytes_total += ref.size;
  stats_.encoded_bytes += ref.header.encoded_size;
  stats_.fingerprint += ref.header.first_time + 3 * ref.header.last_time;
  refs_.push_back(ref);
  return result;
}

size_t ChunkStore::drop_chunks_from(uint16_t location, uint32_t sequence) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t dropped = 0;
  size_t kept = 0;
  for (size_t i = 0; i < refs_.size(); ++i) {
    const ChunkRef& r = refs_[i];
    if (r.header.location != location || r.header.sequence < sequence) {
      refs_[kept++] = r;
      continue;
    }
    ++dropped;
    stats_.chunks -= 1;
    stats_.events -= r.header.event_count;
    stats_.bytes_total -= r.size;
    stats_.encoded_bytes -= r.header.encoded_size;
    stats_.fingerprint -= r.header.first_time + 3 * r.header.last_time;
    if (r.spilled) {
      stats_.bytes_spilled -= r.size;  // the bytes stay in the file, unreferenced
      stats_.chunks_spilled -= 1;
    } else {
      stats_.bytes_in_memory -= r.size;
      std::vector<uint8_t>().swap(memory_[r.offset]);  // the slot stays: offsets are indices
    }
  }
  refs_.resize(kept);
  return dropped;
}

Status ChunkStore::open_file(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!refs_.empty() || spill_fd_ >= 0) return Status::kInvalidArgument;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::kIoError;
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return Status::kIoError;
  }
  // The file becomes this store's (read-only) backing file: never written, never unlinked.
  spill_fd_ = fd;
  spill_path_ = path;
  owns_spill_file_ = false;
  spill_failed_ = true;  // appends after open_file stay in memory
  budget_ = UINT64_MAX;

  // Index the headers only; payloads are read lazily by read(). A damaged tail leaves the
  // valid prefix indexed and reports kCorrupt.
  const uint64_t file_size = uint64_t(st.st_size);
  uint64_t offset = 0;
  while (offset < file_size) {
    uint8_t raw[kChunkHeaderSize];
    ChunkRef ref;
    if (file_size - offset < kChunkHeaderSize) return Status::kCorrupt;
    if (!read_all_at(fd, raw, kChunkHeaderSize, offset)) return Status::kIoError;
    CRITPATH_FORWARD_IF_ERROR(read_header(raw, kChunkHeaderSize, ref.header));
    const uint64_t size = kChunkHeaderSize + uint64_t(ref.header.payload_size);
    if (size > file_size - offset) return Status::kCorrupt;
    ref.spilled = true;
    ref.offset = offset;
    ref.size = uint32_t(size);
    refs_.push_back(ref);
    stats_.chunks += 1;
    stats_.chunks_spilled += 1;
    stats_.fingerprint += ref.header.first_time + 3 * ref.header.last_time;
    stats_.events += ref.header.event_count;
    stats_.bytes_total += size;
    stats_.bytes_spilled += size;
    stats_.encoded_bytes += ref.header.encoded_size;
    offset += size;
  }
  spill_end_ = offset;
  return Status::kOk;
}

Status ChunkStore::read(size_t i, std::vector<uint8_t>& out) const {
  ChunkRef ref;
  int fd = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (i >= refs_.size()) return Status::kInvalidArgument;
    ref = refs_[i];
    if (!ref.spilled) {
      const std::vector<uint8_t>& m = memory_[ref.offset];
      out.assign(m.begin(), m.end());
      return Status::kOk;
    }
    fd = spill_fd_;
  }
  // pread needs no lock: spilled bytes are never rewritten and the fd lives as long as
  // the store.
  out.resize(ref.size);
  if (fd < 0 || !read_all_at(fd, out.data(), ref.size, ref.offset)) {
    out.clear();
    return Status::kIoError;
  }
  return Status::kOk;
}

bool ChunkStore::write_fd_signal_safe(int fd, ChunkStoreStats& written) const noexcept {
  if (!runtime::sigsafe::lock(mu_)) return false;
  static char copy[64 * 1024];  // spilled chunks pass through here (one writer: the caller's once)
  bool ok = true;
  for (size_t i = 0; i < refs_.size() && ok; ++i) {
    const ChunkRef& r = refs_[i];
    if (!r.spilled) {
      ok = runtime::sigsafe::write_all(fd, memory_[r.offset].data(), r.size);
    } else {
      for (uint64_t done = 0; done < r.size && ok;) {
        const size_t want = size_t(std::min<uint64_t>(sizeof copy, r.size - done));
        const ssize_t got = ::pread(spill_fd_, copy, want, off_t(r.offset + done));
        if (got < 0 && errno == EINTR) continue;
        ok = got > 0 && runtime::sigsafe::write_all(fd, copy, size_t(got));
        done += got > 0 ? uint64_t(got) : 0;
      }
    }
    if (!ok) break;
    written.chunks += 1;
    written.events += r.header.event_count;
    written.bytes_total += r.size;
    written.encoded_bytes += r.header.encoded_size;
    written.fingerprint += r.header.first_time + 3 * r.header.last_time;
  }
  mu_.unlock();
  return ok;
}

std::vector<size_t> ChunkStore::chunks_of(uint16_t location) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<size_t> idx;
  for (size_t i = 0; i < refs_.size(); ++i)
    if (refs_[i].header.location == location) idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](size_t a, size_t b) { return refs_[a].header.sequence < refs_[b].header.sequence; });
  return idx;
}

std::vector<uint16_t> ChunkStore::locations() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<uint16_t> locs;
  for (const ChunkRef& r : refs_) locs.push_back(r.header.location);
  std::sort(locs.begin(), locs.end());
  locs.erase(std::unique(locs.begin(), locs.end()), locs.end());
  return locs;
}

ChunkStoreStats ChunkStore::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

Status ChunkStore::write_file(const std::string& path) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Truncating our own backing file would destroy the chunks we are about to copy.
    if (spill_fd_ >= 0 && path == spill_path_) return Status::kInvalidArgument;
  }
  make_parent_dirs(path);
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return Status::kIoError;
  Status result = Status::kOk;
  std::vector<uint8_t> buf;
  uint64_t offset = 0;
  for (uint16_t loc : locations()) {
    for (size_t i : chunks_of(loc)) {
      result = read(i, buf);
      if (result != Status::kOk) break;
      if (!write_all_at(fd, buf.data(), buf.size(), offset)) {
        result = Status::kIoError;
        break;
      }
      offset += buf.size();
    }
    if (result != Status::kOk) break;
  }
  if (::close(fd) != 0 && result == Status::kOk) result = Status::kIoError;
  return result;
}

}  // namespace critpath::trace
