// NcclBackend: the Backend over NVIDIA's NCCL, one CUDA device per rank, for ranks that
// `hvdrun --nccl` starts on GPU machines.
//
// Create() needs a CUDA device: without one it fails with "nccl: no CUDA device on host H for
// rank N (cudaGetDeviceCount: ...); use --gloo or --mpi on machines without a GPU". The rank uses
// device local_rank % (number of devices). Rank 0 makes the NCCL unique id and publishes it in the
// job's key-value store (hex, under a key prefix of this backend's own, "nccl/<n>/", n counting the NCCL
// backends this rank has created); the others wait for it within BackendContext::timeout. Then
// ncclCommInitRank, and a non-blocking stream of this backend's own.
//
// Every buffer is DEVICE memory (cudaMalloc, or managed memory) of this rank's device: a host
// pointer or another device's memory is an error naming the buffer, checked before anything is
// sent. A buffer's contents must be complete when a call is made, or marked as coming (memory():
// MarkReady records an event, one of a pool reused from mark to mark, on the caller's stream, WaitFor
// makes this backend's stream wait on it, WaitForAll on the latest mark of each caller stream only,
// runtime/stream_points.h): the backend's stream does not otherwise wait for the caller's
// streams, the default stream included. memory() is also how the runtime's engine keeps its fusion buffer in
// device memory and copies members in and out with batched device-to-device copies (nccl_copies.h) on the
// backend's stream. Every call is blocking: it waits for its stream to finish (this backend's own work, never
// the device's): as long as it takes while the ranks are alive (a rank busy in user code before the same call
// is no failure), or up to BackendContext::collective_limit (the stall shutdown time) when one is set. Past
// it, on an asynchronous NCCL error (a peer gone), or when the collective watchdog asks (RequestAbort,
// from its thread; the collective thread aborts), the communicator is aborted (ncclCommAbort, so that the
// process can exit) and this and every later call fail. An average
// is ncclAvg (floating types: each input scaled by 1/size, then summed; integers: the sum divided, truncated
// toward zero), or ncclSum and a division where the loaded NCCL is older than 2.10; at one rank every
// allreduce is a copy, made without NCCL (nccl_average.h says why).
//
// Thread safety: not thread-safe, but any thread may make a call, one call at a time; each call
// selects the rank's device on the calling thread (cudaSetDevice).
#ifndef HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_BACKEND_H_
#define HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_BACKEND_H_

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "runtime/backend.h"
#include "runtime/backends/nccl/nccl_average.h"
#include "runtime/handle_pool.h"
#include "runtime/stream_points.h"

namespace hvdrun {

class NcclBackend : public Backend, private BackendMemory {
 public:
  static StatusOr<std::unique_ptr<Backend>> Create(const BackendContext& context);
  ~NcclBackend() override;

  BackendMemory& memory() override { return *this; }

  Status Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) override;
  Status Broadcast(void* buffer, size_t count, DataType type, int root) override;
  Status Allgather(const void* send, void* recv, size_t count, DataType type) override;
  Status Alltoall(const void* send, void* recv, size_t count, DataType type) override;
  Status Alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                   const std::vector<size_t>& recv_counts, DataType type) override;
  // A one-element allreduce.
  // ncclReduceScatter where every rank's block has the same count; otherwise one ncclReduce per
  // rank's block to that rank, in one group (as Horovod's NCCL reducescatter of uneven parts).
  Status Reducescatter(const void* send, void* recv, const std::vector<size_t>& counts, int rank,
                       DataType type, ReduceOp op) override;
  Status Barrier() override;
  // float32 and float64 with kSum only: ncclAllReduce(buffer, buffer, ..., ncclSum), nothing else.
  Status BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) override;
  // From a pair of events around the collective's work on the backend's stream.
  std::optional<std::chrono::nanoseconds> last_device_time() const override { return last_device_time_; }
  // Thread-safe: the call waiting in Finish aborts the communicator and fails.
  bool RequestAbort() override {
    abort_requested_.store(true, std::memory_order_release);
    return true;
  }

 private:
  struct Resources {
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    void* barrier_buffer = nullptr;  // one float32 on the device
    cudaEvent_t started = nullptr;   // recorded before a collective's work, on the stream
    cudaEvent_t stopped = nullptr;   // and after it
  };

  NcclBackend(int rank, int size, int device, NcclAverage average, Resources resources,
              std::chrono::milliseconds collective_limit);

  // Selects this rank's device on the calling thread; fails if the communicator was aborted.
  Status Prepare(std::string_view call) const;
  // OK if `pointer` is device memory of this rank's device, or managed memory.
  Status CheckDevicePointer(std::string_view call, std::string_view which, const void* pointer) const;
  // Turns the result of enqueueing `call` into a Status.
  Status Enqueued(std::string_view call, ncclResult_t result) const;
  // Marks the start of a collective's work on the stream, for last_device_time.
  void StartTiming();
  // Waits until the stream has run everything enqueued, within collective_limit_ when set; aborts on
  // failure, past the limit and when asked (RequestAbort).
  Status Finish(std::string_view call);

  // BackendMemory: this rank's device and the backend's stream (nccl_backend_memory.cc).
  bool on_device() const override { return true; }
  StatusOr<Buffer> Allocate(size_t bytes) override;
  Status CopyAll(const std::vector<Copy>& copies) override;
  Status Zero(void* to, size_t bytes) override;
  Status Scale(void* values, size_t count, DataType type, double factor) override;
  Status Flush() override;
  StatusOr<ReadyMark> MarkReady(void* caller_stream) override;
  Status WaitFor(const ReadyMark& mark) override;
  Status WaitForAll(const std::vector<const ReadyMark*>& marks) override;
  // Finish calls it, with a waiter on an event recorded after the queued work.
  void OnQueued(std::function<void(StreamWaiter)> queued) override { queued_ = std::move(queued); }
  void Abort();

  const int rank_;
  const int size_;
  const int device_;
  const NcclAverage average_;                         // how an average is made (ChooseNcclAverage)
  Resources resources_;                               // comm is null once aborted
  const std::chrono::milliseconds collective_limit_;  // 0: none
  // RequestAbort, from the watchdog's thread; cleared as each call starts (Prepare).
  mutable std::atomic<bool> abort_requested_{false};
  bool timing_ = false;  // StartTiming was called for the collective now running
  std::optional<std::chrono::nanoseconds> last_device_time_;
  // MarkReady's events, reused (creating one per tensor cost more than recording it); shared with
  // the marks, which may outlive the backend.
  std::shared_ptr<HandlePool> ready_events_;
  StreamPoints ready_points_;                 // numbers the marks in each caller stream's order
  std::function<void(StreamWaiter)> queued_;  // armed by OnQueued; the next Finish calls it
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_BACKEND_H_
