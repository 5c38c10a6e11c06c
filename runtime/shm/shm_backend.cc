#include "runtime/shm/shm_backend.h"

#include <utility>

namespace hvdrun {

bool SharedMemoryServes(const RuntimeOptions& options) {
  return options.shared_memory && options.backend != BackendKind::kNccl && options.size > 1 &&
         options.local_size == options.size;
}

StatusOr<std::unique_ptr<Backend>> WithSharedMemory(std::unique_ptr<Backend> backend,
                                                    const RuntimeOptions& options, KeyValueStore& store,
                                                    const std::string& scope) {
  ShmGroup group;
  group.local_rank = options.local_rank;
  group.local_size = options.local_size;
  group.rank = options.rank;
  // The host's index: the same for its local ranks, whatever order the job's ranks are in.
  group.store_prefix = scope + "shm/" + std::to_string(options.cross_rank) + "/";
  group.timeout = options.timeout;
  StatusOr<std::unique_ptr<ShmSegment>> segment =
      ShmSegment::Open(store, group, ShmSegment::SlotBytesFor(group.local_size));
  if (!segment.ok()) return segment.status();
  return std::unique_ptr<Backend>(
      std::make_unique<ShmBackend>(std::move(backend), std::move(segment).value(), options.size));
}

ShmBackend::ShmBackend(std::unique_ptr<Backend> backend, std::unique_ptr<ShmSegment> segment, int divisor)
    : allreduce_(std::move(segment), divisor), backend_(std::move(backend)) {}

Status ShmBackend::Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) {
  return allreduce_.Allreduce(send, recv, count, type, op);
}

Status ShmBackend::Broadcast(void* buffer, size_t count, DataType type, int root) {
  return backend_->Broadcast(buffer, count, type, root);
}

Status ShmBackend::Allgather(const void* send, void* recv, size_t count, DataType type) {
  return backend_->Allgather(send, recv, count, type);
}

Status ShmBackend::Alltoall(const void* send, void* recv, size_t count, DataType type) {
  return backend_->Alltoall(send, recv, count, type);
}

Status ShmBackend::Barrier() { return backend_->Barrier(); }

Status ShmBackend::BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) {
  return backend_->BaselineAllreduce(buffer, count, type, op);
}

}  // namespace hvdrun
