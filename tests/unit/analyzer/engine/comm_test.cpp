// critpath — tests/unit/analyzer/engine/comm_test.cpp: engine::Comm's and engine::Group's sparse
// all-to-all (exchange) on one rank alone (no MPI): pieces come back as parcels by source,
// empty pieces are not sent, a peer outside the group or named twice is refused.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "analyzer/engine/comm.h"
#include "analyzer/engine/group.h"

using namespace critpath;
using namespace critpath::analyzer;

TEST_CASE("comm: the sparse exchange on one rank hands its piece back as one parcel", "[engine]") {
  const engine::Comm comm;
  const std::vector<unsigned char> bytes = {1, 2, 3, 4, 5};
  std::vector<engine::Comm::Parcel> in;
  REQUIRE(comm.exchange({{0, bytes.data(), bytes.size()}}, in) == Status::kOk);
  REQUIRE(in.size() == 1);
  CHECK(in[0].peer == 0);
  CHECK(in[0].bytes == bytes);
  CHECK(comm.traffic().sent == bytes.size());
  CHECK(comm.traffic().received == bytes.size());
  CHECK(comm.traffic().rounds == 1);

  // Nothing to send (an empty piece is none): still one round, no parcel.
  in.push_back({7, {9}});
  REQUIRE(comm.exchange({{0, bytes.data(), 0}}, in) == Status::kOk);
  CHECK(in.empty());
  REQUIRE(comm.exchange({}, in) == Status::kOk);
  CHECK(in.empty());
  CHECK(comm.traffic().rounds == 3);
}

TEST_CASE("comm: the sparse exchange refuses a peer outside the group or named twice", "[engine]") {
  const engine::Comm comm;
  const unsigned char b[2] = {1, 2};
  std::vector<engine::Comm::Parcel> in;
  CHECK(comm.exchange({{1, b, 2}}, in) == Status::kInvalidArgument);
  CHECK(comm.exchange({{-1, b, 2}}, in) == Status::kInvalidArgument);
  CHECK(comm.exchange({{0, b, 1}, {0, b + 1, 1}}, in) == Status::kInvalidArgument);
}

TEST_CASE("group: exchange forwards to the communicator's sparse exchange", "[engine]") {
  const engine::Group g = engine::Group::local();
  const uint64_t v = 42;
  std::vector<engine::Comm::Parcel> in;
  REQUIRE(g.exchange({{0, reinterpret_cast<const unsigned char*>(&v), sizeof v}}, in) == Status::kOk);
  REQUIRE(in.size() == 1);
  REQUIRE(in[0].bytes.size() == sizeof v);
  uint64_t got = 0;
  std::copy(in[0].bytes.begin(), in[0].bytes.end(), reinterpret_cast<unsigned char*>(&got));
  CHECK(got == 42);
}
