// Backend: what each collective library (runtime/backends/<name>/) implements for the Runtime.
//
// A Backend is created, used and destroyed by the Runtime's single collective thread, so an
// implementation need not be thread-safe. Every method is collective: all ranks call it with the
// same arguments (but their own buffers). Errors are one-line Statuses naming the backend and,
// where known, the peer rank. runtime/backend_conformance.h holds the cases every backend must
// pass; a new backend adds a harness that runs them.
#ifndef HVDRUN_RUNTIME_BACKEND_H_
#define HVDRUN_RUNTIME_BACKEND_H_

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hvdrun/key_value_store.h"
#include "hvdrun/options.h"
#include "hvdrun/status.h"
#include "hvdrun/types.h"

namespace hvdrun {

struct BackendContext {
  int rank = 0;
  int size = 1;
  int local_rank = 0;  // this rank's place on its host in the job (the device it uses)
  int local_size = 1;
  // A process set's group (runtime/process_set_table.h): its members' ranks in the job, ascending, of
  // which this rank is members[rank]; `rank` and `size` are then the set's. Empty: the whole job.
  // group_id names the set (distinct per set, the same on every member).
  std::vector<int> members;
  int group_id = 0;
  KeyValueStore* store = nullptr;  // not owned; outlives the backend
  std::string host_address;
  // How long bootstrapping may wait for a rank (HOROVOD_GLOO_TIMEOUT_SECONDS).
  std::chrono::milliseconds timeout{60000};
  // How long one collective may wait for a peer that is alive: the stall shutdown time when one is
  // set (HOROVOD_STALL_SHUTDOWN_TIME_SECONDS, stall check on); zero, Horovod's default: as long as
  // it takes, since a rank busy in user code (validation, a checkpoint) is no failure. A peer that
  // is gone (exited, killed, its connection closed) fails the collective at once, whatever this is.
  std::chrono::milliseconds collective_limit{0};
};

// BackendContext::collective_limit for a job with `negotiation`'s stall settings (which every job
// reads, in either collective order).
inline std::chrono::milliseconds CollectiveLimitOf(const NegotiationOptions& negotiation) {
  return negotiation.stall_check ? negotiation.stall_shutdown : std::chrono::milliseconds(0);
}

// The limit a backend puts on one wait inside a collective where its library forces one (Gloo's
// context timeout): `limit`, or, when zero, one long enough never to end a live job (30 days).
inline std::chrono::milliseconds CollectiveWaitLimit(std::chrono::milliseconds limit) {
  return limit.count() > 0 ? limit : std::chrono::milliseconds(std::chrono::hours(24 * 30));
}

// Where a backend's buffers live and how the engine moves them: the negotiated engine
// (runtime/negotiation/negotiated_stream.h) copies fused tensors in and out of a fusion buffer, and
// learns when a submitted tensor's values are complete, through the backend's memory. Host backends
// (Gloo, MPI) use HostMemory: memcpy, and every tensor complete when submitted. NCCL's buffers are
// device memory: copies are asynchronous on the backend's stream, ordered before its next call, and
// a tensor is complete once the caller's stream has reached the point where it was submitted
// (a CUDA event recorded there; the backend's stream waits on it, the device as a whole never).
class BackendMemory {
 public:
  // `bytes` from `from` to `to`; the two do not overlap.
  struct Copy {
    void* to = nullptr;
    const void* from = nullptr;
    size_t bytes = 0;
  };
  // Memory of the backend's kind, freed with the last copy of the pointer.
  using Buffer = std::shared_ptr<std::byte>;
  // What the caller's work had reached when it submitted a tensor (MarkReady); null: nothing to
  // wait for.
  using ReadyMark = std::shared_ptr<void>;

  virtual ~BackendMemory() = default;
  // Whether buffers are on a device (not addressable from the host).
  virtual bool on_device() const = 0;
  // `bytes` of the backend's memory (at least one byte), contents undefined.
  virtual StatusOr<Buffer> Allocate(size_t bytes) = 0;
  // Makes every copy, in order, before the backend's next collective runs.
  virtual Status CopyAll(const std::vector<Copy>& copies) = 0;
  // Sets `bytes` at `to` to zero, before the backend's next collective runs.
  virtual Status Zero(void* to, size_t bytes) = 0;
  // Multiplies `count` elements of `type` at `values` by `factor` (Horovod's prescale and postscale
  // factors), as ScaleBy (runtime/reduction_kernels.h) does on the host, before the backend's next
  // collective runs. Device memory only: the engine scales host memory itself (ScaleValues,
  // runtime/request/scale_factors.h), so memory that is not on a device refuses here.
  virtual Status Scale(void* /*values*/, size_t /*count*/, DataType /*type*/, double /*factor*/) {
    return Status::Error("scaling is done on the host for memory that is not on a device");
  }
  // Waits until every copy and collective made so far has finished (the backend's own work only).
  virtual Status Flush() = 0;
  // Called on the caller's thread when it submits a tensor: marks the point of `caller_stream` (a
  // cudaStream_t; null: the device's default stream) after which the tensor is complete. Thread-safe.
  virtual StatusOr<ReadyMark> MarkReady(void* caller_stream) = 0;
  // Makes the backend's next copies and collectives wait for `mark` (null: none).
  virtual Status WaitFor(const ReadyMark& mark) = 0;
  // Makes them wait for every one of `marks` (a fused response's members; nulls: none). A memory
  // whose marks are ordered on their streams (device memory: runtime/stream_points.h) waits for the
  // latest of each stream only.
  virtual Status WaitForAll(const std::vector<const ReadyMark*>& marks) {
    for (const ReadyMark* mark : marks) {
      if (mark == nullptr) continue;
      if (Status status = WaitFor(*mark); !status.ok()) return status;
    }
    return Status::Ok();
  }

  // Makes a caller's stream (a cudaStream_t; null: the default stream) wait for a point of the
  // backend's own work, without the host waiting. Thread-safe; valid after the backend is gone.
  using StreamWaiter = std::function<Status(void* caller_stream)>;
  // Arms `queued` (null disarms): the next time the backend has queued a call's work and is about
  // to wait for it, it calls `queued` once, on that thread, with a waiter for the end of everything
  // queued so far. What waits only for that end (CollectiveHandle::WaitOnStream) need not wait for
  // the host's wait after it. Host memory runs every call before it returns and never calls it.
  virtual void OnQueued(std::function<void(StreamWaiter)> queued) = 0;
};

// Host memory: what Gloo, MPI and shared memory reduce; every call completes before it returns.
class HostMemory final : public BackendMemory {
 public:
  // The one instance.
  static HostMemory& Get() {
    static HostMemory memory;
    return memory;
  }
  bool on_device() const override { return false; }
  StatusOr<Buffer> Allocate(size_t bytes) override {
    return Buffer(new std::byte[std::max<size_t>(bytes, 1)], std::default_delete<std::byte[]>());
  }
  Status CopyAll(const std::vector<Copy>& copies) override {
    for (const Copy& copy : copies) {
      if (copy.bytes > 0) std::memcpy(copy.to, copy.from, copy.bytes);
    }
    return Status::Ok();
  }
  Status Zero(void* to, size_t bytes) override {
    if (bytes > 0) std::memset(to, 0, bytes);
    return Status::Ok();
  }
  Status Flush() override { return Status::Ok(); }
  StatusOr<ReadyMark> MarkReady(void* /*caller_stream*/) override { return ReadyMark(); }
  Status WaitFor(const ReadyMark& /*mark*/) override { return Status::Ok(); }
  void OnQueued(std::function<void(StreamWaiter)> /*queued*/) override {}
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Where this backend's buffers live (see BackendMemory); host memory unless overridden.
  virtual BackendMemory& memory() { return HostMemory::Get(); }
  virtual Status Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) = 0;
  virtual Status Broadcast(void* buffer, size_t count, DataType type, int root) = 0;
  // `send` may be this rank's block of `recv` (in place) or lie anywhere else, also inside recv as
  // long as it does not partly overlap this rank's block.
  virtual Status Allgather(const void* send, void* recv, size_t count, DataType type) = 0;
  // Block j of this rank's `send` (`count` elements at j * count) goes to rank j, which receives it
  // as its block `rank` of `recv`: the exchange under a reduce-scatter whose reduction the caller
  // does itself (the fp8 compressed allreduce). send and recv hold size * count elements each and
  // must not overlap.
  virtual Status Alltoall(const void* send, void* recv, size_t count, DataType type) = 0;
  // Horovod's alltoall with splits: send_counts[j] elements of `send`, back to back in rank order, go
  // to rank j, which receives them as its block `rank` of `recv`, whose blocks (recv_counts[k] elements
  // from rank k) lie back to back in rank order. Both vectors have size() entries, and rank k's
  // send_counts[j] is rank j's recv_counts[k]. send and recv must not overlap. This default pads every
  // block to the largest count any rank gives (one allreduce finds it) and runs Alltoall, for a
  // backend whose library has no alltoall of uneven blocks; Gloo, MPI and NCCL override it.
  virtual Status Alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                           const std::vector<size_t>& recv_counts, DataType type);
  // Horovod's reducescatter: recv (counts[rank] elements) gets this rank's block of `op` over ranks of
  // `send`, whose blocks (counts[j] elements for rank j) lie back to back in rank order. counts has
  // size() entries, the same on every rank; send and recv must not overlap. This default reduces the
  // whole of send with Allreduce into a buffer of the backend's memory and keeps this rank's block,
  // for a backend whose library has no reduce-scatter (Gloo, shared memory); MPI and NCCL override it.
  virtual Status Reducescatter(const void* send, void* recv, const std::vector<size_t>& counts, int rank,
                               DataType type, ReduceOp op);
  virtual Status Barrier() = 0;
  // The library's own in-place allreduce with no conversion (see Runtime::BaselineAllreduce).
  virtual Status BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) = 0;
  // How long the device took for the last collective, timed by events on its stream (NCCL), for the
  // timeline; none for a backend whose calls the host runs (their time is the call's).
  virtual std::optional<std::chrono::nanoseconds> last_device_time() const { return std::nullopt; }
  // An MPI backend: whether its MPI library provides MPI_THREAD_MULTIPLE to this process (Horovod's
  // mpi_threads_supported()); none for the other backends.
  virtual std::optional<bool> mpi_threads_multiple() const { return std::nullopt; }
  // Asks the call that another thread has in this backend to end, with an error, as soon as it can
  // (the collective watchdog, past the stall shutdown time: runtime/collective_watchdog.h).
  // Thread-safe. Returns false where the backend cannot (the default): its own limit
  // (BackendContext::collective_limit) ends the call.
  virtual bool RequestAbort() { return false; }
  // Which ranks the call that another thread has in this backend still waits for, for the
  // collective watchdog's line ("waiting for rank 1 (local rank 1, pid 4242)"); empty where the
  // backend cannot tell, or when it waits for none. Thread-safe.
  virtual std::string Progress() { return {}; }
  // Said by the backend in front of this one when a rank did not arrive for one of its collectives
  // (the stall shutdown time passed, or the rank's process is gone): the ranks can no longer all
  // meet, so this backend's end must not wait for every rank (MPI: no MPI_Finalize, which would wait
  // for the missing rank forever; the process exits without it and mpirun ends the job). On the
  // collective thread.
  virtual void Abandon() {}
};

// Inline, as every other member, so that Backend has no key function: each backend module emits its
// vtable and type information itself (libhvdrun does not export Backend's).
inline Status Backend::Alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                                 const std::vector<size_t>& recv_counts, DataType type) {
  const size_t ranks = send_counts.size();
  if (recv_counts.size() != ranks) {
    return Status::Error("alltoallv: " + std::to_string(ranks) + " send counts but " +
                         std::to_string(recv_counts.size()) + " receive counts");
  }
  int64_t largest = 0;
  for (size_t j = 0; j < ranks; ++j) {
    largest = std::max({largest, static_cast<int64_t>(send_counts[j]), static_cast<int64_t>(recv_counts[j])});
  }
  Status status = Allreduce(&largest, &largest, 1, DataType::kInt64, ReduceOp::kMax);
  if (!status.ok() || largest == 0) return status;
  const size_t element = DataTypeSize(type);
  const size_t block = static_cast<size_t>(largest) * element;
  std::vector<std::byte> padded(block * ranks, std::byte{0});
  std::vector<std::byte> received(block * ranks);
  const auto* from = static_cast<const std::byte*>(send);
  for (size_t j = 0; j < ranks; ++j) {
    const size_t bytes = send_counts[j] * element;
    if (bytes > 0) std::memcpy(padded.data() + j * block, from, bytes);
    from += bytes;
  }
  status = Alltoall(padded.data(), received.data(), static_cast<size_t>(largest), type);
  if (!status.ok()) return status;
  auto* to = static_cast<std::byte*>(recv);
  for (size_t k = 0; k < ranks; ++k) {
    const size_t bytes = recv_counts[k] * element;
    if (bytes > 0) std::memcpy(to, received.data() + k * block, bytes);
    to += bytes;
  }
  return Status::Ok();
}

inline Status Backend::Reducescatter(const void* send, void* recv, const std::vector<size_t>& counts,
                                     int rank, DataType type, ReduceOp op) {
  size_t total = 0;
  size_t before = 0;
  for (size_t j = 0; j < counts.size(); ++j) {
    if (static_cast<int>(j) < rank) before += counts[j];
    total += counts[j];
  }
  if (total == 0) return Status::Ok();
  const size_t element = DataTypeSize(type);
  StatusOr<BackendMemory::Buffer> reduced = memory().Allocate(total * element);
  if (!reduced.ok()) return reduced.status();
  Status status = Allreduce(send, reduced.value().get(), total, type, op);
  if (!status.ok() || counts[static_cast<size_t>(rank)] == 0) return status;
  status = memory().CopyAll(
      {{recv, reduced.value().get() + before * element, counts[static_cast<size_t>(rank)] * element}});
  // The buffer is freed on return: its copy must have been made.
  return status.ok() ? memory().Flush() : status;
}

// Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte: for the backends whose library
// takes an in-place call only in one form.
inline bool BuffersOverlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto a_begin = reinterpret_cast<uintptr_t>(a);
  const auto b_begin = reinterpret_cast<uintptr_t>(b);
  return a_begin < b_begin + b_bytes && b_begin < a_begin + a_bytes;
}

// The error of backend `name`'s alltoallv on `rank` when `send_counts` or `recv_counts` do not hold
// one count per rank of `size`; OK when both do.
inline Status CheckAlltoallvCounts(const char* name, const std::vector<size_t>& send_counts,
                                   const std::vector<size_t>& recv_counts, int size, int rank) {
  const auto ranks = static_cast<size_t>(size);
  if (send_counts.size() == ranks && recv_counts.size() == ranks) return Status::Ok();
  return Status::Error(std::string(name) + ": alltoallv: " + std::to_string(send_counts.size()) +
                       " send and " + std::to_string(recv_counts.size()) + " receive counts for " +
                       std::to_string(ranks) + " ranks on rank " + std::to_string(rank));
}

// Creates the backend `kind` for this rank, bootstrapping through context.store. A backend that
// was not built into this library is an error that says so and how to build it. In libhvdrun.so
// each backend is a module loaded on its first use: a module that is missing or cannot be loaded
// is an error naming its path and what to do (backend_module_loader.h). backend.cc says where the
// two definitions are, and how to add a backend.
StatusOr<std::unique_ptr<Backend>> CreateBackend(BackendKind kind, const BackendContext& context);

// The error for a backend that was not built: backend 'nccl' is not built into this libhvdrun (...).
Status BackendNotBuiltIn(BackendKind kind);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKEND_H_
