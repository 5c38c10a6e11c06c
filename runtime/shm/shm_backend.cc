#include "runtime/shm/shm_backend.h"

#include <utility>

#include "runtime/shm/prefixed_store.h"

namespace hvdrun {

bool SharedMemoryServes(const RuntimeOptions& options) {
  return options.shared_memory && options.backend != BackendKind::kNccl && options.size > 1 &&
         options.local_size == options.size;
}

bool HierarchicalAsked(const RuntimeOptions& options) {
  // Several hosts: a host holds fewer than all ranks. Not cross_size > 1: a rank's cross_size counts
  // the hosts that have a rank of its local rank (Horovod's), so with hosts of uneven sizes it is 1 on
  // a local rank only the largest host has, and that rank would not take part in the agreement.
  return options.hierarchical_allreduce && options.shared_memory && options.backend == BackendKind::kGloo &&
         options.local_size < options.size;
}

StatusOr<bool> AgreeOnHierarchical(const RuntimeOptions& options, KeyValueStore& store,
                                   const std::string& scope) {
  if (!HierarchicalAsked(options)) return false;
  const std::string prefix = scope + "hierarchical/local_size/";
  if (Status told = store.Set(prefix + std::to_string(options.rank), std::to_string(options.local_size));
      !told.ok()) {
    return Status::Error("hierarchical allreduce: " + told.message());
  }
  bool even = options.local_size > 1 && options.local_size * options.cross_size == options.size;
  for (int rank = 0; rank < options.size; ++rank) {
    StatusOr<std::string> local_size = store.Get(prefix + std::to_string(rank), options.timeout);
    if (!local_size.ok()) return Status::Error("hierarchical allreduce: " + local_size.status().message());
    even = even && local_size.value() == std::to_string(options.local_size);
  }
  return even;
}

StatusOr<std::unique_ptr<ShmBackend>> WithSharedMemory(std::unique_ptr<Backend> backend,
                                                       const RuntimeOptions& options, KeyValueStore& store,
                                                       const std::string& scope, bool hierarchical) {
  ShmGroup group;
  group.local_rank = options.local_rank;
  group.local_size = options.local_size;
  group.rank = options.rank;
  // The host's index: the same for its local ranks, whatever order the job's ranks are in.
  group.store_prefix = scope + "shm/" + std::to_string(options.cross_rank) + "/";
  group.timeout = options.timeout;
  group.barrier_limit = CollectiveLimitOf(options.negotiation);
  StatusOr<std::unique_ptr<ShmSegment>> segment =
      ShmSegment::Open(store, group, ShmSegment::SlotBytesFor(group.local_size));
  if (!segment.ok()) return segment.status();
  std::unique_ptr<KeyValueStore> cross_store;
  std::unique_ptr<Backend> cross;
  if (hierarchical) {
    cross_store =
        std::make_unique<PrefixedStore>(store, scope + "cross/" + std::to_string(options.local_rank) + "/");
    BackendContext context;
    context.rank = options.cross_rank;
    context.size = options.cross_size;
    context.store = cross_store.get();
    context.host_address = options.host_address;
    context.timeout = options.timeout;
    context.collective_limit = CollectiveLimitOf(options.negotiation);
    StatusOr<std::unique_ptr<Backend>> created = CreateBackend(options.backend, context);
    if (!created.ok()) return Status::Error("hierarchical allreduce: " + created.status().message());
    cross = std::move(created).value();
  }
  return std::make_unique<ShmBackend>(std::move(backend), std::move(segment).value(), options.size,
                                      std::move(cross_store), std::move(cross));
}

ShmBackend::ShmBackend(std::unique_ptr<Backend> backend, std::unique_ptr<ShmSegment> segment, int divisor,
                       std::unique_ptr<KeyValueStore> cross_store, std::unique_ptr<Backend> cross)
    : cross_store_(std::move(cross_store)),
      cross_(std::move(cross)),
      allreduce_(std::move(segment), divisor, cross_.get()),
      backend_(std::move(backend)) {}

std::string ShmBackend::Progress() {
  std::string missing = allreduce_.segment().Missing();
  return missing.empty() ? backend_->Progress() : missing;
}

Status ShmBackend::Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) {
  if (cross_ != nullptr && !hierarchical_) return backend_->Allreduce(send, recv, count, type, op);
  Status status = allreduce_.Allreduce(send, recv, count, type, op);
  if (!status.ok()) Abandon();
  return status;
}

void ShmBackend::Abandon() {
  backend_->Abandon();
  if (cross_ != nullptr) cross_->Abandon();
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
