// critpath — analyzer/engine/mailbox.h
//
// The transport of the engine's distributed replays: passes that re-enact the run's
// dependencies rank by rank (the what-if simulation forward, the delay analysis's cost
// propagation backward) send small records to the ranks that will need them, as the run sent
// its messages, and block only where the run itself waited for another rank:
//
//   pass: append(dest) records ... flush_all() before blocking ... next(src, batch) ... finish()
//   mailbox: one byte batch per destination, posted (Group::post) when it reaches kFlushBytes
//            or at flush_all(); receives whole batches from any rank, in arrival order per
//            sender; finish() tells each rank it sent batches to how many (a sparse exchange,
//            Group::exchange), takes the rest, and waits until every post was delivered.
//
// A record's layout is the pass's. Records to oneself never leave the process: append() with
// dest == rank() queues them for next() like any other batch. Every wait is bounded by the
// deadline given at construction (kMpiError past it): a replay of an inconsistent trace (a
// dependency nobody sends) ends with an error, never a hang.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <vector>

#include "analyzer/engine/group.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::engine {

class Mailbox {
 public:
  static constexpr size_t kFlushBytes = 32768;

  // `timeout_s` from now (at least 1 s) every wait gives up.
  Mailbox(const Group& group, double timeout_s);
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  int rank() const { return group_.rank(); }
  int size() const { return group_.size(); }

  // The open batch for `dest`: append a record, then call appended(dest). The reference
  // stays valid for the mailbox's life.
  std::vector<unsigned char>& batch(int dest) {
    if (dest != last_dest_) {
      last_ = &out_[dest];
      last_dest_ = dest;
    }
    return *last_;
  }
  // Posts dest's batch when it is full enough.
  Status appended(int dest) { return batch(dest).size() >= kFlushBytes ? flush(dest) : Status::kOk; }
  // Posts dest's batch when it is not empty.
  Status flush(int dest);
  // Posts every non-empty batch (call before blocking in next()).
  Status flush_all();
  // The next batch sent to this rank (by `src`), waiting for one if none arrived yet.
  Status next(int& src, std::vector<unsigned char>& bytes);
  // After the last record: every batch the others sent here handed to `take`, and every post of
  // this rank delivered. Collective over the group.
  Status finish(const std::function<Status(int, const std::vector<unsigned char>&)>& take);

  bool past_deadline() const;
  double remaining_s() const;
  uint64_t batches_sent() const { return messages_; }  // to other ranks
  uint64_t bytes_sent() const { return bytes_; }

 private:
  const Group& group_;
  // Per destination this rank wrote to, not yet posted; batches per peer this rank sent to
  // or heard from (maps: a rank of a large group talks to few, and nothing here is sized by
  // the group).
  std::map<int, std::vector<unsigned char>> out_;
  std::vector<unsigned char>* last_ = nullptr;  // out_[last_dest_] (map nodes never move)
  int last_dest_ = -1;
  std::map<int, uint64_t> sent_, got_;
  std::deque<std::vector<unsigned char>> self_;  // batches to oneself, not yet taken
  uint64_t deadline_ns_;
  uint64_t messages_ = 0, bytes_ = 0;
};

}  // namespace critpath::analyzer::engine
