#include "runtime/forwarding_backend.h"

#include <numeric>

namespace hvdrun {

Status ForwardingBackend::Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) {
  return Pass("allreduce", count * DataTypeSize(type),
              [&] { return backend_->Allreduce(send, recv, count, type, op); });
}

Status ForwardingBackend::Broadcast(void* buffer, size_t count, DataType type, int root) {
  return Pass("broadcast", count * DataTypeSize(type),
              [&] { return backend_->Broadcast(buffer, count, type, root); });
}

Status ForwardingBackend::Allgather(const void* send, void* recv, size_t count, DataType type) {
  return Pass("allgather", count * DataTypeSize(type),
              [&] { return backend_->Allgather(send, recv, count, type); });
}

Status ForwardingBackend::Alltoall(const void* send, void* recv, size_t count, DataType type) {
  return Pass("alltoall", count * DataTypeSize(type),
              [&] { return backend_->Alltoall(send, recv, count, type); });
}

Status ForwardingBackend::Alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                                    const std::vector<size_t>& recv_counts, DataType type) {
  const size_t sent = std::accumulate(send_counts.begin(), send_counts.end(), size_t{0});
  return Pass("alltoall", sent * DataTypeSize(type),
              [&] { return backend_->Alltoallv(send, send_counts, recv, recv_counts, type); });
}

Status ForwardingBackend::Reducescatter(const void* send, void* recv, const std::vector<size_t>& counts,
                                        int rank, DataType type, ReduceOp op) {
  const size_t sent = std::accumulate(counts.begin(), counts.end(), size_t{0});
  return Pass("reducescatter", sent * DataTypeSize(type),
              [&] { return backend_->Reducescatter(send, recv, counts, rank, type, op); });
}

Status ForwardingBackend::Barrier() {
  return Pass("barrier", 0, [&] { return backend_->Barrier(); });
}

Status ForwardingBackend::BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) {
  return Pass("baseline allreduce", count * DataTypeSize(type),
              [&] { return backend_->BaselineAllreduce(buffer, count, type, op); });
}

}  // namespace hvdrun
