// critpath — analyzer/engine/mailbox.cpp: batched records between the ranks of a distributed
// replay (see mailbox.h).
#include "analyzer/engine/mailbox.h"

#include <algorithm>
#include <cstring>

#include "libtrace/clock/clock.h"

namespace critpath::analyzer::engine {

Mailbox::Mailbox(const Group& group, double timeout_s)
    : group_(group), out_(size_t(group.size())), sent_(size_t(group.size()), 0),
      got_(size_t(group.size()), 0),
      deadline_ns_(clock::monotonic_ns() + uint64_t(std::max(1.0, timeout_s) * 1e9)) {}

bool Mailbox::past_deadline() const { return clock::monotonic_ns() >= deadline_ns_; }

double Mailbox::remaining_s() const {
  const uint64_t now = clock::monotonic_ns();
  return now >= deadline_ns_ ? 0.0 : double(deadline_ns_ - now) * 1e-9;
}

Status Mailbox::flush(int dest) {
  std::vector<unsigned char>& o = out_[size_t(dest)];
  if (o.empty()) return Status::kOk;
  if (dest == group_.rank()) {
    self_.push_back(std::move(o));
    o.clear();
    return Status::kOk;
  }
  bytes_ += o.size();
  ++messages_;
  ++sent_[size_t(dest)];
  const Status s = group_.post(dest, std::move(o));
  o.clear();
  return s;
}

Status Mailbox::flush_all() {
  for (size_t d = 0; d < out_.size(); ++d) CRITPATH_FORWARD_IF_ERROR(flush(int(d)));
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
  if (src < 0 || size_t(src) >= got_.size()) return Status::kMpiError;
  ++got_[size_t(src)];
  return Status::kOk;
}

Status Mailbox::finish(const std::function<Status(int, const std::vector<unsigned char>&)>& take) {
  CRITPATH_FORWARD_IF_ERROR(flush_all());
  while (!self_.empty()) {
    std::vector<unsigned char> b = std::move(self_.front());
    self_.pop_front();
    CRITPATH_FORWARD_IF_ERROR(take(group_.rank(), b));
  }
  std::vector<int> counts(sent_.size(), int(sizeof(uint64_t)));
  std::vector<unsigned char> recv;
  std::vector<int> recv_counts;
  CRITPATH_FORWARD_IF_ERROR(group_.alltoallv(sent_.data(), counts, recv, recv_counts));
  for (size_t s = 0; s < sent_.size(); ++s) {
    uint64_t expected = 0;
    if (recv.size() >= (s + 1) * sizeof expected)
      std::memcpy(&expected, recv.data() + s * sizeof expected, sizeof expected);
    while (got_[s] < expected) {
      int src = -1;
      std::vector<unsigned char> b;
      CRITPATH_FORWARD_IF_ERROR(next(src, b));
      CRITPATH_FORWARD_IF_ERROR(take(src, b));
    }
  }
  return group_.complete_posts(remaining_s());
}

}  // namespace critpath::analyzer::engine
