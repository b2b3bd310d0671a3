// critpath — analyzer/engine/comm.h
//
// The analysis ranks as the engine sees them: one per traced location (a traced MPI rank),
// whatever number of processes runs the analysis.
//
//   in-situ (inside MPI_Finalize)    one location per process: every operation is one MPI call
//                                    on a private duplicate of MPI_COMM_WORLD (Comm::native)
//   critpath-analyze on fewer        each process hosts several locations, one fiber each on
//   processes than the run had       a pool of worker threads (Comm::hosted, fiber.h): an
//                                    operation first meets the calling process's other members
//                                    of the communicator in memory, then the last one to
//                                    arrive makes one nonblocking MPI call for all of them on a
//                                    communicator over the hosting processes, polled while the
//                                    waiting fibers yield (a worker never blocks in MPI)
//   unit tests                       Comm() is one location alone and never calls MPI
//
// So the engine and the passes are written once, against one location per analysis rank,
// and the same trace gives the same report on 16, 4 or 1 process (Scalasca's analysis needs
// exactly as many processes as the run had).
//
// Every operation is collective over the communicator (create_group: over `members`), must
// be called by all its members in the same order, and returns kOk or kMpiError (outputs then
// unspecified). Hosted mode needs MPI_THREAD_MULTIPLE: the hosting processes' worker threads
// drive different communicators at once. Reductions of floating-point sums may associate in
// another order than a native MPI_Allreduce: results agree to rounding. Hosted, what moves
// between processes is what the members send: an all-to-all packs only non-empty blocks, a
// gather to every rank moves each rank's contribution once per process.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "libtrace/runtime/status.h"

namespace critpath::analyzer::engine {

struct HostedComm;  // comm.cpp

class Comm {
 public:
  // One location alone: rank 0 of 1; every operation is a local copy.
  Comm() = default;
  // A private duplicate of `comm` with MPI_ERRORS_RETURN: one location per process.
  static Status native(MPI_Comm comm, Comm& out);
  // `comm` itself, one location per process, for code that must use the communicator it was
  // given (the session's exchanges inside MPI_Init on MPI_COMM_WORLD, critpath-analyze's own
  // world): never duplicated nor freed here, its error handler left as the application set it
  // (a failing operation then aborts if that handler says so; otherwise it returns kMpiError).
  // Collectives only: post() and receive() would meet the application's messages. Its dup(),
  // bcast(), allreduce() and allgather() are the blocking MPI calls, as the session made them
  // before it went through Comm: under Open MPI 4.1 a nonblocking duplication of the
  // application's MPI_COMM_WORLD during its run made its later MPI_Dist_graph_create hang in
  // the context-id agreement (mpi.wrappers.comm, one run in three), and nonblocking
  // collectives would use the application's communicator's tag space besides.
  static Status borrow(MPI_Comm comm, Comm& out);
  // `n_locations` locations over the processes of `procs` (collective over `procs`), in
  // contiguous blocks (locations_of). `mine` receives one communicator per location this
  // process hosts, in location order; each is to be used by one fiber (or thread) only, all
  // of them at once (fiber.h's run()). Requires
  // n_locations >= the number of processes.
  static Status hosted(MPI_Comm procs, int n_locations, std::vector<Comm>& mine);
  // The locations process `proc` of `n_procs` hosts: [first, first + count).
  static void locations_of(int n_locations, int n_procs, int proc, int& first, int& count);

  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  Comm(Comm&& o) noexcept { *this = std::move(o); }
  Comm& operator=(Comm&& o) noexcept;
  ~Comm();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_local() const { return mpi_ == MPI_COMM_NULL && !hosted_; }
  // The MPI communicator of a native or borrowed Comm (MPI_COMM_NULL otherwise), for engine
  // code that makes its own calls on it (clock_sync.h's ping-pongs).
  MPI_Comm native_handle() const { return mpi_; }

  // What this analysis rank moved through this communicator and every one made from it
  // (dup, split, create_group share the count), for the analysis's own figures (report.json
  // scalars.analysis_bytes, analysis_rounds): payload bytes it sent and received (collectives
  // and point to point: what the rank's own buffers give and take, its own block included),
  // and the collective operations it took part in, each one round (post and receive are none).
  struct Traffic {
    uint64_t sent = 0, received = 0, rounds = 0;
  };
  Traffic traffic() const { return traffic_ ? *traffic_ : Traffic{}; }
  // Counts `n` rounds that the caller synchronized through point to point (a merge tree's
  // steps: post and receive count none themselves).
  void count_rounds(uint64_t n) const { share_traffic()->rounds += n; }
  // Whether this is the first analysis rank of its process (natively, every one): the one
  // that speaks for the process (its memory).
  bool first_in_process() const { return !hosted_ || local_ == 0; }

  // The MPI environment, local calls. MPI_APPNUM (which command of an MPMD launch this
  // process runs, an attribute of MPI_COMM_WORLD) of a native or borrowed communicator:
  // false when unset. The MPI library's version text (MPI_Get_library_version), as the
  // library gives it.
  bool app_number(int& out) const;
  static Status library_version(std::string& out);

  // New communicators. dup and split are collective over this one; create_group over
  // `members` (ranks of this communicator, in the new rank order) only, with a `tag` that
  // tells concurrent creations apart (as MPI_Comm_create_group's).
  Status dup(Comm& out) const;
  Status split(int color, Comm& out) const;  // ordered by rank here
  Status create_group(const std::vector<int>& members, int tag, Comm& out) const;

  Status barrier() const;
  // Elementwise over `n` elements of `type` (predefined types and ops, incl. MPI_DOUBLE_INT
  // with MPI_MAXLOC/MPI_MINLOC).
  Status allreduce(void* inout, int n, MPI_Datatype type, MPI_Op op) const;
  Status reduce(const void* in, void* out, int n, MPI_Datatype type, MPI_Op op, int root) const;
  Status scan(const void* in, void* out, int n, MPI_Datatype type, MPI_Op op) const;  // inclusive
  Status bcast(void* buf, size_t bytes, int root) const;
  // Every rank's `bytes`, rank after rank, into `all` (size() * bytes) on every rank.
  Status allgather(const void* mine, size_t bytes, void* all) const;
  // Every rank's `n` elements of `elem_bytes`, rank after rank, into `all` on every rank.
  Status allgatherv(const void* mine, int n, size_t elem_bytes, std::vector<unsigned char>& all) const;
  // Elements of `elem_bytes`: send_counts[d] to rank d, contiguous in rank order; `recv`
  // receives every rank's elements in rank order and recv_counts[s] their number (computed
  // here unless recv_counts_known). At most 2^31 - 1 elements per rank and call.
  Status alltoallv(const void* send, const std::vector<int>& send_counts, size_t elem_bytes,
                   std::vector<unsigned char>& recv, std::vector<int>& recv_counts,
                   bool recv_counts_known = false) const;
  // A piece of bytes to a comm rank, a parcel of bytes from one (exchange(), and hosted
  // mode's routed exchange in comm.cpp).
  struct Piece {
    int peer;
    const unsigned char* data;
    size_t bytes;
  };
  struct Parcel {
    int peer;
    std::vector<unsigned char> bytes;
  };
  // The sparse all-to-all, for exchanges where a rank talks to few others: each piece of
  // `out` (any order, at most one per rank, empty ones skipped) to the rank it names; `in`
  // receives the pieces sent to this rank, one parcel per source rank, by ascending source
  // rank. Hosted, nothing sized by the communicator is made per rank (the
  // pieces are routed as the hosted all-to-all routes them); natively one count per rank goes
  // with them, as in alltoallv (one rank per process there), unless `expect` names the bytes
  // each rank will send this one (its pieces' peer and bytes, ascending by peer; a rank not
  // named sends nothing), as both sides know beforehand (a reply of a known size). kInvalidArgument
  // for a peer outside the communicator or named twice.
  Status exchange(const std::vector<Piece>& out, std::vector<Parcel>& in,
                  const std::vector<Piece>* expect = nullptr) const;
  // On the root: every rank's `n` elements in rank order, counts and first indices in
  // elements. Elsewhere the three vectors are left empty.
  Status gatherv(const void* mine, int n, size_t elem_bytes, int root, std::vector<unsigned char>& all,
                 std::vector<int>& counts, std::vector<int>& displs) const;
  // The root's counts[r] elements (contiguous in rank order) to rank r, into `mine`.
  Status scatterv(const void* all, const std::vector<int>& counts, size_t elem_bytes, int root,
                  std::vector<unsigned char>& mine) const;

  // Point to point, for replays that follow the run's own dependencies message by message
  // (analyzer/passes/whatif). Unlike everything above these are not collective. post() queues
  // `bytes` for rank `dest` (not this rank) and returns at once: the bytes are kept until
  // delivered. receive() waits up to `timeout_s` for the next message to this rank, from any
  // rank, in each sender's posting order: kMpiError on timeout or failure. complete_posts()
  // waits (up to `timeout_s`) until every posted message was delivered.
  Status post(int dest, std::vector<unsigned char>&& bytes) const;
  Status receive(int& src, std::vector<unsigned char>& bytes, double timeout_s) const;
  Status complete_posts(double timeout_s) const;

 private:
  // Collective: every piece of `out` (non-empty, at most one per rank) to its rank; `in`
  // receives the pieces sent to this rank, by ascending source rank.
  Status route(const std::vector<Piece>& out, std::vector<Parcel>& in) const;
  // exchange() over a native communicator: `pieces` ascending by peer, one per peer.
  Status exchange_native(const std::vector<Piece>& pieces, std::vector<Parcel>& in,
                         const std::vector<Piece>* expect) const;
  // Hosted: every member's `in` combined, into its `out` (a null `out`: that member needs none).
  Status allreduce_hosted(const void* in, void* out, int n, MPI_Datatype type, MPI_Op op) const;
  Status dup_made(Comm& out) const;
  Status split_made(int color, Comm& out) const;
  Status create_group_made(const std::vector<int>& members, int tag, Comm& out) const;
  static Status make_part(HostedComm& h, const std::vector<int>& members, int tag);
  // One operation of the rank's traffic (a round unless `round` is false).
  void note(uint64_t sent, uint64_t received, bool round = true) const {
    Traffic& t = *share_traffic();
    t.sent += sent;
    t.received += received;
    t.rounds += round ? 1 : 0;
  }
  const std::shared_ptr<Traffic>& share_traffic() const {
    if (!traffic_) traffic_ = std::make_shared<Traffic>();
    return traffic_;
  }
  // A new communicator's ending: one round; `out`, when `made` is kOk, shares the count.
  Status inherit(Status made, Comm& out) const;
  // A native communicator over `made`, the result of an MPI call that returned `rc`.
  static Status adopt(int rc, MPI_Comm made, Comm& out);
  // The communicator of member `rank` (hosted in this process) of the hosted state `h`.
  static Comm member(std::shared_ptr<HostedComm> h, int rank, int size);

  struct Posts;  // comm.cpp: the messages post() sent and MPI has not yet delivered
  // Starts one nonblocking send of `bytes` (kept until delivered) on `comm`.
  Status post_mpi(MPI_Comm comm, int dest, int tag, std::vector<unsigned char>&& bytes) const;
  // Delivered sends leave the queue; with `all`, waits for every one (up to `timeout_s`).
  Status reap(bool all, double timeout_s) const;
  static Status sweep(Posts& p);  // reap's one pass: drops the delivered posts
  Status receive_polled(int& src, std::vector<unsigned char>& bytes, uint64_t deadline_ns) const;
  template <typename Look>
  Status wait_inbox(uint64_t deadline_ns, Look look) const;

  MPI_Comm mpi_ = MPI_COMM_NULL;        // native mode: owned unless borrowed
  bool borrowed_ = false;               // mpi_ is the caller's (borrow)
  std::shared_ptr<HostedComm> hosted_;  // hosted mode: shared by this process's members
  int local_ = 0;                       // hosted: index among this process's members
  int rank_ = 0;
  int size_ = 1;
  mutable std::shared_ptr<Posts> posts_;      // made by the first post()
  mutable std::shared_ptr<Traffic> traffic_;  // made by the first operation; shared by derived ones
};

}  // namespace critpath::analyzer::engine
