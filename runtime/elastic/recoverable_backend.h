// RecoverableBackend: an elastic runtime's backend (RuntimeOptions::elastic). Every call goes to the
// backend it wraps; a call that fails, with a Status or by throwing (a peer gone, a connection reset,
// a wait that timed out), fails with ErrorKind::kRecoverable instead, so that the program
// re-initializes rather than ending: the one line says what the wrapped backend said. Never throws.
//
// Thread-safety: as the wrapped backend's.
#ifndef HVDRUN_RUNTIME_ELASTIC_RECOVERABLE_BACKEND_H_
#define HVDRUN_RUNTIME_ELASTIC_RECOVERABLE_BACKEND_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "runtime/backend.h"

namespace hvdrun {

class RecoverableBackend final : public Backend {
 public:
  explicit RecoverableBackend(std::unique_ptr<Backend> backend) : backend_(std::move(backend)) {}

  BackendMemory& memory() override { return backend_->memory(); }
  Status Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) override;
  Status Broadcast(void* buffer, size_t count, DataType type, int root) override;
  Status Allgather(const void* send, void* recv, size_t count, DataType type) override;
  Status Alltoall(const void* send, void* recv, size_t count, DataType type) override;
  Status Alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                   const std::vector<size_t>& recv_counts, DataType type) override;
  Status Barrier() override;
  Status BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) override;
  std::optional<std::chrono::nanoseconds> last_device_time() const override {
    return backend_->last_device_time();
  }

 private:
  const std::unique_ptr<Backend> backend_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_ELASTIC_RECOVERABLE_BACKEND_H_
