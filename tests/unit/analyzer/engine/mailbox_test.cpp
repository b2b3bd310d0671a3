// critpath — tests/unit/analyzer/engine/mailbox_test.cpp: engine::Mailbox on a one-rank group (no
// MPI): records to oneself come back as batches, in order, through next() and finish().
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "analyzer/engine/group.h"
#include "analyzer/engine/mailbox.h"

using namespace critpath;
using namespace critpath::analyzer;

TEST_CASE("mailbox: records to oneself, flushed per batch, taken in order", "[engine]") {
  const engine::Group g = engine::Group::local();
  engine::Mailbox box(g, 5);
  REQUIRE(box.rank() == 0);
  REQUIRE(box.size() == 1);
  // More than one batch's worth: the full batch is queued when it reaches kFlushBytes.
  const size_t n = engine::Mailbox::kFlushBytes / sizeof(uint32_t) + 10;
  for (uint32_t i = 0; i < n; ++i) {
    std::vector<unsigned char>& b = box.batch(0);
    const unsigned char* p = reinterpret_cast<const unsigned char*>(&i);
    b.insert(b.end(), p, p + sizeof i);
    REQUIRE(box.appended(0) == Status::kOk);
  }
  std::vector<uint32_t> got;
  auto take = [&](int src, const std::vector<unsigned char>& b) {
    CHECK(src == 0);
    CHECK(b.size() % sizeof(uint32_t) == 0);
    for (size_t at = 0; at + sizeof(uint32_t) <= b.size(); at += sizeof(uint32_t)) {
      uint32_t v = 0;
      std::copy(b.begin() + long(at), b.begin() + long(at + sizeof v), reinterpret_cast<unsigned char*>(&v));
      got.push_back(v);
    }
    return Status::kOk;
  };
  int src = -1;
  std::vector<unsigned char> first;
  REQUIRE(box.next(src, first) == Status::kOk);  // the full batch, already queued
  REQUIRE(take(src, first) == Status::kOk);
  CHECK(got.size() == engine::Mailbox::kFlushBytes / sizeof(uint32_t));
  REQUIRE(box.finish(take) == Status::kOk);  // flushes and hands over the rest
  REQUIRE(got.size() == n);
  for (uint32_t i = 0; i < n; ++i) REQUIRE(got[i] == i);
  CHECK(box.batches_sent() == 0);  // nothing left the process
  CHECK_FALSE(box.past_deadline());
}

TEST_CASE("mailbox: a batch stays where it is, and finish() with nothing sent ends at once", "[engine]") {
  const engine::Group g = engine::Group::local();
  engine::Mailbox box(g, 5);
  std::vector<unsigned char>& b = box.batch(0);
  CHECK(&box.batch(0) == &b);               // the same open batch, however often asked for
  REQUIRE(box.flush_all() == Status::kOk);  // nothing open: nothing posted
  int taken = 0;
  REQUIRE(box.finish([&](int, const std::vector<unsigned char>&) {
    ++taken;
    return Status::kOk;
  }) == Status::kOk);
  CHECK(taken == 0);
  CHECK(box.batches_sent() == 0);
  CHECK(box.bytes_sent() == 0);
}
