// critpath — libtrace/buffer/chunk_store.h
//
// Where compressed chunks live until the analysis reads them: in memory up to a budget,
// then appended to a per-rank spill file. A full budget or a failing spill file never drops
// a chunk; only running out of memory does (append returns kNoMemory and the recorder then
// stops recording for the rank, docs/reliability.md).
//
//   compressor --append(chunk)--> [in-memory chunks ... budget] --overflow--> spill file
//   reader     --read(i)-------->  memory or pread() from the spill file
//
// Thread safety: append() may be called concurrently (compressor thread and application
// threads compressing inline); everything else is for after recording has stopped.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "libtrace/buffer/codec.h"
#include "libtrace/runtime/status.h"

namespace critpath::trace {

struct ChunkRef {
  ChunkHeader header;
  bool spilled = false;
  uint64_t offset = 0;  // in the spill file when spilled, else index into the memory list
  uint32_t size = 0;    // whole chunk bytes (header + payload)
};

struct ChunkStoreStats {
  uint64_t chunks = 0;
  uint64_t events = 0;
  uint64_t bytes_total = 0;  // compressed bytes, header included
  uint64_t bytes_in_memory = 0;
  uint64_t bytes_spilled = 0;
  uint64_t chunks_spilled = 0;
  uint64_t encoded_bytes = 0;  // bytes before zstd
  // Wrapping sum of the chunks' first and last event times: tells one rank's trace from
  // another's with the same sizes (critpath-analyze checks a kept file against its .json).
  uint64_t fingerprint = 0;
};

class ChunkStore {
 public:
  ChunkStore() = default;
  ~ChunkStore();
  ChunkStore(const ChunkStore&) = delete;
  ChunkStore& operator=(const ChunkStore&) = delete;

  // memory_budget: compressed bytes kept in memory before spilling. spill_path: the file
  // created (O_EXCL not required; truncated) on the first spill; empty: never spill.
  // memory_cap: when chunks past the budget cannot be spilled, the compressed bytes kept in
  // memory at most; append() then refuses more with kNoMemory. Call before append().
  void configure(uint64_t memory_budget, std::string spill_path, uint64_t memory_cap = UINT64_MAX);
  // errno of the failed spill (0 while spilling works or was never tried).
  int spill_errno() const;

  // Whether a spill file could be created at `spill_path` and take `bytes` bytes, without
  // creating anything: 0, or the errno that says why not (ENOTDIR: a file where a directory
  // should be; EACCES, EROFS: not writable; ENOSPC: full).
  static int probe_spill(const std::string& spill_path, size_t bytes = 64 * 1024);

  // Takes a complete chunk (header + payload). Thread-safe. On a spill I/O error the chunk
  // is kept in memory instead (over budget, never dropped) and kIoError is returned once.
  // Never throws: out of memory returns kNoMemory with the store unchanged and `chunk` not
  // taken.
  Status append(std::vector<uint8_t>&& chunk);

  // Forgets the chunks of `location` with sequence >= `sequence` (the recorder cuts a
  // location's trace after its first lost chunk so that it stays a gap-free prefix).
  // Returns how many were dropped. Thread-safe; never allocates.
  size_t drop_chunks_from(uint16_t location, uint32_t sequence);

  // Loads every chunk of a kept trace file (concatenated chunks) into this store, as
  // spilled chunks read lazily from that file. For offline re-analysis.
  Status open_file(const std::string& path);

  size_t size() const { return refs_.size(); }
  const ChunkRef& ref(size_t i) const { return refs_[i]; }
  // Reads chunk i (header + payload) into `out`.
  Status read(size_t i, std::vector<uint8_t>& out) const;
  // Indices of the chunks of one location ordered by sequence number.
  std::vector<size_t> chunks_of(uint16_t location) const;
  // Distinct locations present, ascending.
  std::vector<uint16_t> locations() const;
  ChunkStoreStats stats() const;

  // Writes every chunk, in (location, sequence) order, to `path` (a kept trace).
  Status write_file(const std::string& path) const;
  // For a partial trace written at a fault (runtime/sigsafe.h): writes every chunk stored so
  // far to `fd`, in store order (a kept trace file, read back in (location, sequence) order),
  // and adds what it wrote to `written` (chunks, events, bytes, fingerprint). No allocation;
  // the store's lock is only tried (false, nothing written, when it stays taken). False too on
  // a write error, after the chunks that went out.
  bool write_fd_signal_safe(int fd, ChunkStoreStats& written) const noexcept;
  const std::string& spill_path() const { return spill_path_; }

 private:
  Status append_or_throw(std::vector<uint8_t>&& chunk);

  mutable std::mutex mu_;
  uint64_t budget_ = UINT64_MAX;
  uint64_t memory_cap_ = UINT64_MAX;
  int spill_errno_ = 0;
  std::string spill_path_;
  int spill_fd_ = -1;
  bool spill_failed_ = false;
  bool owns_spill_file_ = true;
  uint64_t spill_end_ = 0;
  std::vector<ChunkRef> refs_;
  std::vector<std::vector<uint8_t>> memory_;
  ChunkStoreStats stats_;
};

}  // namespace critpath::trace
