// critpath — analyzer/engine/mailbox.cpp: batched records between the ranks of a distributed
// replay (see mailbox.h).
#include "analyzer/engine/mailbox.h"

#include <algorithm>
#include <cstring>

#include "libtrace/clock/clock.h"

namespace critpath::analyzer::engine {

Mailbox::Mailbox(const Group& group, double timeout_s)
    : group_(group), deadline_ns_(clock::monotonic_ns() + uint64_t(std::max(1.0, timeout_s) * 1e9)) {}

bool Mailbox::past_deadline() const { return clock::monotonic_ns() >= deadline_ns_; }

double Mailbox::remaining_s() const {
  const uint64_t now = clock::monotonic_ns();
  return now >= deadline_ns_ ? 0.0 : double(deadline_ns_ - now) * 1e-9;
}

Status Mailbox::flush(int dest) {
  std::vector<unsigned char>& o = batch(dest);
  if (o.empty()) return Status::kOk;
  if (dest == group_.rank()) {
    self_.push_back(std::move(o));
    o.clear();
    return Status::kOk;
  }
  bytes_ += o.size();
  ++messages_;
  ++sent_[dest];
  const Status s = group_.post(dest, std::move(o));
  o.clear();
  return s;
}

Status Mailbox::flush_all() {
  for (auto& [dest, o] : out_)
    if (!o.empty()) CRITPATH_FORWARD_IF_ERROR(flush(dest));
  return Status::kOk;
}

Status Mailbox::next(int& src, std::vector<unsigned char>& bytes) {
  if (!self_.empty()) {
    src = group_.rank();
    bytes = std::move(self_.front());
    self_.pop_front();
    return Status::kOk;
  }
  if (past_deadline()) return Status::kMpiError;
  src = -1;
  CRITPATH_FORWARD_IF_ERROR(group_.receive(src, bytes, remaining_s()));
  if (src < 0 || src >= group_.size()) return Status::kMpiError;
  ++got_[src];
  return Status::kOk;
}

Status Mailbox::finish(const std::function<Status(int, const std::vector<unsigned char>&)>& take) {
  CRITPATH_FORWARD_IF_ERROR(flush_all());
  while (!self_.empty()) {
    std::vector<unsigned char> b = std::move(self_.front());
    self_.pop_front();
    CRITPATH_FORWARD_IF_ERROR(take(group_.rank(), b));
  }
  // Each rank this one sent batches to learns how many; a rank not told was sent none.
  std::vector<Comm::Piece> out;
  out.reserve(sent_.size());
  for (const auto& [dest, n] : sent_)
    out.push_back({dest, reinterpret_cast<const unsigned char*>(&n), sizeof n});
  std::vector<Comm::Parcel> in;
  CRITPATH_FORWARD_IF_ERROR(group_.exchange(out, in));
  for (const Comm::Parcel& parcel : in) {
    uint64_t expected = 0;
    if (parcel.bytes.size() != sizeof expected) return Status::kMpiError;
    std::memcpy(&expected, parcel.bytes.data(), sizeof expected);
    while (got_[parcel.peer] < expected) {
      int src = -1;
      std::vector<unsigned char> b;
      CRITPATH_FORWARD_IF_ERROR(next(src, b));
      CRITPATH_FORWARD_IF_ERROR(take(src, b));
    }
  }
  return group_.complete_posts(remaining_s());
}

}  // namespace critpath::analyzer::engine
