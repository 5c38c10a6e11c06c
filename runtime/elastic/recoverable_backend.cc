#include "runtime/elastic/recoverable_backend.h"

#include <exception>
#include <string>
#include <utility>

#include "hvdrun/error_kind.h"

namespace hvdrun {
namespace {

// Runs `call` (a backend call returning Status); its failure, thrown or returned, as recoverable.
template <typename Call>
Status Recoverable(const char* what, Call&& call) {
  try {
    return AsRecoverable(std::forward<Call>(call)());
  } catch (const std::exception& e) {
    return ErrorOfKind(ErrorKind::kRecoverable, std::string(what) + " failed: " + e.what());
  }
}

}  // namespace

Status RecoverableBackend::Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) {
  return Recoverable("allreduce", [&] { return backend_->Allreduce(send, recv, count, type, op); });
}

Status RecoverableBackend::Broadcast(void* buffer, size_t count, DataType type, int root) {
  return Recoverable("broadcast", [&] { return backend_->Broadcast(buffer, count, type, root); });
}

Status RecoverableBackend::Allgather(const void* send, void* recv, size_t count, DataType type) {
  return Recoverable("allgather", [&] { return backend_->Allgather(send, recv, count, type); });
}

Status RecoverableBackend::Alltoall(const void* send, void* recv, size_t count, DataType type) {
  return Recoverable("alltoall", [&] { return backend_->Alltoall(send, recv, count, type); });
}

Status RecoverableBackend::Alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                                     const std::vector<size_t>& recv_counts, DataType type) {
  return Recoverable("alltoall",
                     [&] { return backend_->Alltoallv(send, send_counts, recv, recv_counts, type); });
}

Status RecoverableBackend::Barrier() {
  return Recoverable("barrier", [&] { return backend_->Barrier(); });
}

Status RecoverableBackend::BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) {
  return Recoverable("allreduce", [&] { return backend_->BaselineAllreduce(buffer, count, type, op); });
}

}  // namespace hvdrun
