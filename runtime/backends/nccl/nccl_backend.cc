#include "runtime/backends/nccl/nccl_backend.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "runtime/backends/nccl/nccl_average.h"
#include "runtime/backends/nccl/nccl_ready_events.h"
#include "runtime/backends/nccl/nccl_scale.h"
#include "runtime/backends/nccl/nccl_terms.h"
#include "runtime/backends/nccl/nccl_unique_id.h"
#include "runtime/handle_pool.h"

namespace hvdrun {
namespace {

std::string PointerText(const void* pointer) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", pointer);
  return text;
}

void Release(ncclComm_t comm, cudaStream_t stream, void* barrier_buffer, cudaEvent_t started,
             cudaEvent_t stopped) {
  if (comm != nullptr) ncclCommDestroy(comm);
  if (stream != nullptr) cudaStreamDestroy(stream);
  if (barrier_buffer != nullptr) cudaFree(barrier_buffer);
  if (started != nullptr) cudaEventDestroy(started);
  if (stopped != nullptr) cudaEventDestroy(stopped);
}

}  // namespace

StatusOr<std::unique_ptr<Backend>> NcclBackend::Create(const BackendContext& context) {
  if (context.store == nullptr) return Status::Error("nccl: no store to bootstrap through");
  int devices = 0;
  const cudaError_t counted = cudaGetDeviceCount(&devices);
  if (counted != cudaSuccess || devices <= 0) {
    const std::string reason = counted != cudaSuccess ? CudaErrorText(counted) : "0 devices";
    return Status::Error("nccl: no CUDA device on host " + context.host_address + " for rank " +
                         std::to_string(context.rank) + " (cudaGetDeviceCount: " + reason +
                         "); use --gloo or --mpi on machines without a GPU");
  }
  const int device = context.local_rank % devices;
  const std::string where = "nccl: rank " + std::to_string(context.rank) + " on host " +
                            context.host_address + ", device " + std::to_string(device) + ": ";
  if (const cudaError_t error = cudaSetDevice(device); error != cudaSuccess) {
    return Status::Error(where + "cudaSetDevice failed: " + CudaErrorText(error));
  }
  StatusOr<ncclUniqueId> id = ExchangeUniqueId(context);
  if (!id.ok()) return id.status();

  Resources resources;
  if (const ncclResult_t result = ncclCommInitRank(&resources.comm, context.size, id.value(), context.rank);
      result != ncclSuccess) {
    return Status::Error(where + "ncclCommInitRank failed: " + NcclErrorText(result, nullptr));
  }
  cudaError_t error = cudaStreamCreateWithFlags(&resources.stream, cudaStreamNonBlocking);
  if (error == cudaSuccess) error = cudaMalloc(&resources.barrier_buffer, sizeof(float));
  if (error == cudaSuccess) error = cudaMemset(resources.barrier_buffer, 0, sizeof(float));
  if (error == cudaSuccess) error = cudaEventCreate(&resources.started);
  if (error == cudaSuccess) error = cudaEventCreate(&resources.stopped);
  if (error != cudaSuccess) {
    const std::string reason = CudaErrorText(error);
    Release(resources.comm, resources.stream, resources.barrier_buffer, resources.started, resources.stopped);
    return Status::Error(where + "setting up the stream failed: " + reason);
  }
  int version = 0;
  if (const ncclResult_t result = ncclGetVersion(&version); result != ncclSuccess) {
    Release(resources.comm, resources.stream, resources.barrier_buffer, resources.started, resources.stopped);
    return Status::Error(where + "ncclGetVersion failed: " + NcclErrorText(result, nullptr));
  }
  return std::unique_ptr<Backend>(new NcclBackend(context.rank, context.size, device,
                                                  ChooseNcclAverage(version, context.size), resources,
                                                  context.collective_limit));
}

NcclBackend::NcclBackend(int rank, int size, int device, NcclAverage average, Resources resources,
                         std::chrono::milliseconds collective_limit)
    : rank_(rank),
      size_(size),
      device_(device),
      average_(average),
      resources_(resources),
      collective_limit_(collective_limit),
      ready_events_(ReadyEventPool()) {}

NcclBackend::~NcclBackend() {
  cudaSetDevice(device_);
  Release(resources_.comm, resources_.stream, resources_.barrier_buffer, resources_.started,
          resources_.stopped);
}

Status NcclBackend::Prepare(std::string_view call) const {
  if (resources_.comm == nullptr) {
    return Status::Error("nccl: " + std::string(call) + ": the communicator of rank " +
                         std::to_string(rank_) + " was aborted after an earlier failure");
  }
  // A request for a call that finished before it came is not this call's.
  abort_requested_.store(false, std::memory_order_release);
  if (const cudaError_t error = cudaSetDevice(device_); error != cudaSuccess) {
    return Status::Error("nccl: " + std::string(call) + ": cudaSetDevice(" + std::to_string(device_) +
                         ") failed: " + CudaErrorText(error));
  }
  return Status::Ok();
}

Status NcclBackend::CheckDevicePointer(std::string_view call, std::string_view which,
                                       const void* pointer) const {
  const std::string prefix = "nccl: " + std::string(call) + ": the " + std::string(which) + " " +
                             PointerText(pointer) + " on rank " + std::to_string(rank_);
  cudaPointerAttributes attributes{};
  if (const cudaError_t error = cudaPointerGetAttributes(&attributes, pointer); error != cudaSuccess) {
    return Status::Error(prefix + " is not CUDA memory (cudaPointerGetAttributes: " + CudaErrorText(error) +
                         "); the nccl backend takes device memory (cudaMalloc)");
  }
  if (attributes.type == cudaMemoryTypeManaged) return Status::Ok();
  if (attributes.type != cudaMemoryTypeDevice) {
    return Status::Error(prefix +
                         " is host memory; the nccl backend takes device memory (cudaMalloc) of device " +
                         std::to_string(device_));
  }
  if (attributes.device != device_) {
    return Status::Error(prefix + " is memory of device " + std::to_string(attributes.device) +
                         ", but this rank uses device " + std::to_string(device_));
  }
  return Status::Ok();
}

Status NcclBackend::Enqueued(std::string_view call, ncclResult_t result) const {
  if (result == ncclSuccess) return Status::Ok();
  return Status::Error("nccl: " + std::string(call) + " failed on rank " + std::to_string(rank_) + ": " +
                       NcclErrorText(result, resources_.comm));
}

void NcclBackend::StartTiming() {
  timing_ = cudaEventRecord(resources_.started, resources_.stream) == cudaSuccess;
  last_device_time_.reset();
}

Status NcclBackend::Finish(std::string_view call) {
  const bool limited = collective_limit_.count() > 0;
  const auto deadline = std::chrono::steady_clock::now() + collective_limit_;
  const bool timed = timing_ && cudaEventRecord(resources_.stopped, resources_.stream) == cudaSuccess;
  timing_ = false;
  if (queued_ != nullptr) {
    // Where an event cannot be recorded, the waiter is not given: its handles complete as usual.
    std::function<void(StreamWaiter)> queued = std::move(queued_);
    queued_ = nullptr;
    StatusOr<HandlePool::Lease> end = RecordOnDevice(device_, ready_events_, resources_.stream);
    if (end.ok()) queued(StreamWaiterFor(rank_, std::move(end).value()));
  }
  while (true) {
    const cudaError_t queried = cudaStreamQuery(resources_.stream);
    if (queried == cudaSuccess) {
      float milliseconds = 0;
      if (timed &&
          cudaEventElapsedTime(&milliseconds, resources_.started, resources_.stopped) == cudaSuccess) {
        last_device_time_ = std::chrono::nanoseconds(static_cast<int64_t>(milliseconds * 1e6));
      }
      return Status::Ok();
    }
    if (queried != cudaErrorNotReady) {
      const std::string reason = CudaErrorText(queried);
      Abort();
      return Status::Error("nccl: " + std::string(call) + " failed on rank " + std::to_string(rank_) + ": " +
                           reason);
    }
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(resources_.comm, &async);
    if (async != ncclSuccess && async != ncclInProgress) {
      const std::string reason = NcclErrorText(async, resources_.comm);
      Abort();
      return Status::Error("nccl: " + std::string(call) + " failed on rank " + std::to_string(rank_) + ": " +
                           reason);
    }
    if (abort_requested_.exchange(false, std::memory_order_acq_rel)) {
      Abort();
      return Status::Error("nccl: " + std::string(call) + " on rank " + std::to_string(rank_) +
                           " was stuck; the communicator was aborted");
    }
    if (limited && std::chrono::steady_clock::now() > deadline) {
      Abort();
      return Status::Error("nccl: " + std::string(call) + " on rank " + std::to_string(rank_) +
                           " did not finish within the stall shutdown time (" +
                           std::to_string(collective_limit_.count()) +
                           " ms, HOROVOD_STALL_SHUTDOWN_TIME_SECONDS): a rank is stuck or the ranks made "
                           "different calls; the communicator was aborted");
    }
    std::this_thread::yield();
  }
}

void NcclBackend::Abort() {
  if (resources_.comm == nullptr) return;
  ncclCommAbort(resources_.comm);
  resources_.comm = nullptr;
}

Status NcclBackend::Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) {
  if (count == 0) return Status::Ok();
  Status status = Prepare("allreduce");
  if (status.ok()) status = CheckDevicePointer("allreduce", "send buffer", send);
  if (status.ok() && recv != send) status = CheckDevicePointer("allreduce", "receive buffer", recv);
  if (!status.ok()) return status;
  StartTiming();
  if (size_ == 1) {
    // One rank's allreduce is its input (nccl_average.h: NCCL's one-rank average kernel loses the tail).
    // In place, it still waits for the stream: for the events it waits on (MarkReady), so that the
    // result is complete for every stream once this returns.
    if (send == recv) return Finish("allreduce");
    const cudaError_t error =
        cudaMemcpyAsync(recv, send, count * DataTypeSize(type), cudaMemcpyDeviceToDevice, resources_.stream);
    if (error != cudaSuccess) {
      return Status::Error("nccl: allreduce failed on rank " + std::to_string(rank_) +
                           ": copying the send buffer to the receive buffer: " + CudaErrorText(error));
    }
    return Finish("allreduce");
  }
  const bool divide = op == ReduceOp::kAverage && average_ == NcclAverage::kSumThenDivide;
  status =
      Enqueued("allreduce", ncclAllReduce(send, recv, count, NcclType(type), divide ? ncclSum : NcclOp(op),
                                          resources_.comm, resources_.stream));
  if (status.ok() && divide) {
    if (const cudaError_t error = DivideOnStream(recv, count, type, size_, resources_.stream);
        error != cudaSuccess) {
      return Status::Error("nccl: allreduce failed on rank " + std::to_string(rank_) +
                           ": dividing the sum by " + std::to_string(size_) + ": " + CudaErrorText(error));
    }
  }
  return status.ok() ? Finish("allreduce") : status;
}

Status NcclBackend::Broadcast(void* buffer, size_t count, DataType type, int root) {
  if (count == 0) return Status::Ok();
  Status status = Prepare("broadcast");
  if (status.ok()) status = CheckDevicePointer("broadcast", "buffer", buffer);
  if (status.ok()) {
    StartTiming();
    status = Enqueued("broadcast", ncclBroadcast(buffer, buffer, count, NcclType(type), root, resources_.comm,
                                                 resources_.stream));
  }
  return status.ok() ? Finish("broadcast") : status;
}

Status NcclBackend::Allgather(const void* send, void* recv, size_t count, DataType type) {
  if (count == 0) return Status::Ok();
  Status status = Prepare("allgather");
  if (status.ok()) status = CheckDevicePointer("allgather", "send buffer", send);
  if (status.ok()) status = CheckDevicePointer("allgather", "receive buffer", recv);
  if (!status.ok()) return status;
  StartTiming();
  const size_t bytes = count * DataTypeSize(type);
  char* own_block = static_cast<char*>(recv) + static_cast<size_t>(rank_) * bytes;
  const void* source = send;
  if (send != own_block) {
    if (BuffersOverlap(send, bytes, own_block, bytes)) {
      return Status::Error("nccl: allgather: the send buffer " + PointerText(send) + " on rank " +
                           std::to_string(rank_) +
                           " partly overlaps this rank's block of the receive buffer; pass the block itself "
                           "(in place) or a buffer apart from it");
    }
    // NCCL gathers in place only from this rank's own block; a send buffer elsewhere inside recv,
    // which the other ranks' blocks would overwrite, is copied there first.
    if (BuffersOverlap(send, bytes, recv, bytes * static_cast<size_t>(size_))) {
      const cudaError_t error =
          cudaMemcpyAsync(own_block, send, bytes, cudaMemcpyDeviceToDevice, resources_.stream);
      if (error != cudaSuccess) {
        return Status::Error("nccl: allgather failed on rank " + std::to_string(rank_) +
                             ": copying the send buffer into place: " + CudaErrorText(error));
      }
      source = own_block;
    }
  }
  status = Enqueued("allgather",
                    ncclAllGather(source, recv, count, NcclType(type), resources_.comm, resources_.stream));
  return status.ok() ? Finish("allgather") : status;
}

Status NcclBackend::Alltoall(const void* send, void* recv, size_t count, DataType type) {
  if (count == 0) return Status::Ok();
  Status status = Prepare("alltoall");
  if (status.ok()) status = CheckDevicePointer("alltoall", "send buffer", send);
  if (status.ok()) status = CheckDevicePointer("alltoall", "receive buffer", recv);
  if (!status.ok()) return status;
  const size_t bytes = count * DataTypeSize(type);
  if (BuffersOverlap(send, bytes * static_cast<size_t>(size_), recv, bytes * static_cast<size_t>(size_))) {
    return Status::Error("nccl: alltoall: the send and receive buffers overlap on rank " +
                         std::to_string(rank_));
  }
  // NCCL has no alltoall of its own: a send and a receive per peer, in one group.
  status = Enqueued("alltoall", ncclGroupStart());
  for (int peer = 0; peer < size_ && status.ok(); ++peer) {
    const size_t offset = static_cast<size_t>(peer) * bytes;
    status = Enqueued("alltoall", ncclSend(static_cast<const char*>(send) + offset, count, NcclType(type),
                                           peer, resources_.comm, resources_.stream));
    if (status.ok()) {
      status = Enqueued("alltoall", ncclRecv(static_cast<char*>(recv) + offset, count, NcclType(type), peer,
                                             resources_.comm, resources_.stream));
    }
  }
  const Status ended = Enqueued("alltoall", ncclGroupEnd());
  if (status.ok()) status = ended;
  return status.ok() ? Finish("alltoall") : status;
}

Status NcclBackend::Alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                              const std::vector<size_t>& recv_counts, DataType type) {
  if (Status counts = CheckAlltoallvCounts("nccl", send_counts, recv_counts, size_, rank_); !counts.ok()) {
    return counts;
  }
  const auto ranks = static_cast<size_t>(size_);
  size_t send_total = 0;
  size_t recv_total = 0;
  for (size_t j = 0; j < ranks; ++j) {
    send_total += send_counts[j];
    recv_total += recv_counts[j];
  }
  Status status = Prepare("alltoallv");
  if (status.ok() && send_total > 0) status = CheckDevicePointer("alltoallv", "send buffer", send);
  if (status.ok() && recv_total > 0) status = CheckDevicePointer("alltoallv", "receive buffer", recv);
  if (!status.ok()) return status;
  const size_t element = DataTypeSize(type);
  if (BuffersOverlap(send, send_total * element, recv, recv_total * element)) {
    return Status::Error("nccl: alltoallv: the send and receive buffers overlap on rank " +
                         std::to_string(rank_));
  }
  // A send and a receive per peer with something to exchange, in one group: a pair of ranks agrees on
  // whether there is (rank k's send_counts[j] is rank j's recv_counts[k]).
  status = Enqueued("alltoallv", ncclGroupStart());
  size_t send_at = 0;
  size_t recv_at = 0;
  for (int peer = 0; peer < size_ && status.ok(); ++peer) {
    const auto p = static_cast<size_t>(peer);
    if (send_counts[p] > 0) {
      status =
          Enqueued("alltoallv", ncclSend(static_cast<const char*>(send) + send_at * element, send_counts[p],
                                         NcclType(type), peer, resources_.comm, resources_.stream));
    }
    if (status.ok() && recv_counts[p] > 0) {
      status = Enqueued("alltoallv", ncclRecv(static_cast<char*>(recv) + recv_at * element, recv_counts[p],
                                              NcclType(type), peer, resources_.comm, resources_.stream));
    }
    send_at += send_counts[p];
    recv_at += recv_counts[p];
  }
  const Status ended = Enqueued("alltoallv", ncclGroupEnd());
  if (status.ok()) status = ended;
  return status.ok() ? Finish("alltoallv") : status;
}

Status NcclBackend::Reducescatter(const void* send, void* recv, const std::vector<size_t>& counts, int rank,
                                  DataType type, ReduceOp op) {
  const size_t own = counts[static_cast<size_t>(rank)];
  size_t total = 0;
  bool equal = true;
  for (size_t count : counts) {
    total += count;
    equal = equal && count == counts.front();
  }
  if (total == 0) return Status::Ok();
  Status status = Prepare("reducescatter");
  if (status.ok()) status = CheckDevicePointer("reducescatter", "send buffer", send);
  if (status.ok() && own > 0) status = CheckDevicePointer("reducescatter", "receive buffer", recv);
  if (!status.ok()) return status;
  const size_t element = DataTypeSize(type);
  if (BuffersOverlap(send, total * element, recv, own * element)) {
    return Status::Error("nccl: reducescatter: the send and receive buffers overlap on rank " +
                         std::to_string(rank_));
  }
  StartTiming();
  const bool divide = op == ReduceOp::kAverage && (average_ == NcclAverage::kSumThenDivide || size_ == 1);
  const ncclRedOp_t nccl_op = divide ? ncclSum : NcclOp(op);
  if (equal) {
    status = Enqueued("reducescatter", ncclReduceScatter(send, recv, own, NcclType(type), nccl_op,
                                                         resources_.comm, resources_.stream));
  } else {
    status = Enqueued("reducescatter", ncclGroupStart());
    size_t offset = 0;
    for (int root = 0; root < size_ && status.ok(); ++root) {
      const size_t count = counts[static_cast<size_t>(root)];
      if (count > 0) {
        status = Enqueued("reducescatter",
                          ncclReduce(static_cast<const char*>(send) + offset * element, recv, count,
                                     NcclType(type), nccl_op, root, resources_.comm, resources_.stream));
      }
      offset += count;
    }
    const Status ended = Enqueued("reducescatter", ncclGroupEnd());
    if (status.ok()) status = ended;
  }
  if (status.ok() && divide && size_ > 1 && own > 0) {
    if (const cudaError_t error = DivideOnStream(recv, own, type, size_, resources_.stream);
        error != cudaSuccess) {
      return Status::Error("nccl: reducescatter failed on rank " + std::to_string(rank_) +
                           ": dividing the sum by " + std::to_string(size_) + ": " + CudaErrorText(error));
    }
  }
  return status.ok() ? Finish("reducescatter") : status;
}

Status NcclBackend::Barrier() {
  Status status = Prepare("barrier");
  if (status.ok()) {
    status = Enqueued("barrier", ncclAllReduce(resources_.barrier_buffer, resources_.barrier_buffer, 1,
                                               ncclFloat32, ncclSum, resources_.comm, resources_.stream));
  }
  return status.ok() ? Finish("barrier") : status;
}

Status NcclBackend::BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) {
  if (op != ReduceOp::kSum || (type != DataType::kFloat32 && type != DataType::kFloat64)) {
    return Status::Error("nccl: the baseline allreduce supports float32 and float64 with sum, not " +
                         std::string(DataTypeName(type)) + " with " + std::string(ReduceOpName(op)));
  }
  if (count == 0) return Status::Ok();
  Status status = Prepare("baseline allreduce");
  if (status.ok()) status = CheckDevicePointer("baseline allreduce", "buffer", buffer);
  if (status.ok()) {
    status = Enqueued("baseline allreduce", ncclAllReduce(buffer, buffer, count, NcclType(type), ncclSum,
                                                          resources_.comm, resources_.stream));
  }
  return status.ok() ? Finish("baseline allreduce") : status;
}

}  // namespace hvdrun
