#include "runtime/watched_backend.h"

#include <numeric>
#include <utility>

namespace hvdrun {

WatchedBackend::WatchedBackend(std::unique_ptr<Backend> backend, WatchdogSettings settings)
    : owned_(std::move(backend)), backend_(owned_.get()), watchdog_(std::move(settings), backend_) {}

WatchedBackend::WatchedBackend(Backend& backend, WatchdogSettings settings)
    : backend_(&backend), watchdog_(std::move(settings), backend_) {}

template <typename Body>
Status WatchedBackend::Watched(const char* op, size_t bytes, Body&& body) {
  watchdog_.Enter(WatchedCall{label_, op, bytes});
  return watchdog_.Exit(body());
}

Status WatchedBackend::Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) {
  return Watched("allreduce", count * DataTypeSize(type),
                 [&] { return backend_->Allreduce(send, recv, count, type, op); });
}

Status WatchedBackend::Broadcast(void* buffer, size_t count, DataType type, int root) {
  return Watched("broadcast", count * DataTypeSize(type),
                 [&] { return backend_->Broadcast(buffer, count, type, root); });
}

Status WatchedBackend::Allgather(const void* send, void* recv, size_t count, DataType type) {
  return Watched("allgather", count * DataTypeSize(type),
                 [&] { return backend_->Allgather(send, recv, count, type); });
}

Status WatchedBackend::Alltoall(const void* send, void* recv, size_t count, DataType type) {
  return Watched("alltoall", count * DataTypeSize(type),
                 [&] { return backend_->Alltoall(send, recv, count, type); });
}

Status WatchedBackend::Alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                                 const std::vector<size_t>& recv_counts, DataType type) {
  const size_t sent = std::accumulate(send_counts.begin(), send_counts.end(), size_t{0});
  return Watched("alltoall", sent * DataTypeSize(type),
                 [&] { return backend_->Alltoallv(send, send_counts, recv, recv_counts, type); });
}

Status WatchedBackend::Barrier() {
  return Watched("barrier", 0, [&] { return backend_->Barrier(); });
}

Status WatchedBackend::BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) {
  return Watched("baseline allreduce", count * DataTypeSize(type),
                 [&] { return backend_->BaselineAllreduce(buffer, count, type, op); });
}

void LabelWatchedCalls(Backend& backend, std::string label) {
  if (auto* watched = dynamic_cast<WatchedBackend*>(&backend)) watched->set_label(std::move(label));
}

}  // namespace hvdrun
