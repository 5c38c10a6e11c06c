// ForwardingBackend: a Backend in front of another that passes every call on, the base of the
// wrappers that change what happens around each call (WatchedBackend: the collective watchdog;
// RecoverableBackend: an elastic job's recoverable failures). A wrapper overrides Forward only.
//
// The data calls (Allreduce, Broadcast, Allgather, Alltoall, Alltoallv, Reducescatter, Barrier,
// BaselineAllreduce) each go through Forward, with the call's name and bytes, to the wrapped
// backend's own (MPI's and NCCL's reduce-scatter, the others' default over their allreduce); memory,
// last_device_time, RequestAbort, Progress and mpi_threads_multiple are the wrapped
// backend's.
//
// As every Backend: used by one collective thread; RequestAbort and Progress from any thread, as the
// wrapped backend allows.
#ifndef HVDRUN_RUNTIME_FORWARDING_BACKEND_H_
#define HVDRUN_RUNTIME_FORWARDING_BACKEND_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "runtime/backend.h"

namespace hvdrun {

// One call on its way to the wrapped backend: what it is, for messages, and the call itself. Lives
// for the duration of Forward; borrows the body it runs.
class ForwardedCall {
 public:
  template <typename Body>
  ForwardedCall(const char* op, size_t bytes, Body& body)
      : op_(op), bytes_(bytes), body_(&body), run_([](void* run) { return (*static_cast<Body*>(run))(); }) {}

  // "allreduce", "broadcast", "allgather", "alltoall" (Alltoallv too), "barrier", "baseline allreduce".
  const char* op() const { return op_; }
  // The bytes this rank sends (0 for a barrier).
  size_t bytes() const { return bytes_; }
  // Makes the call on the wrapped backend.
  Status Run() const { return run_(body_); }

 private:
  const char* op_;
  size_t bytes_;
  void* body_;
  Status (*run_)(void*);
};

class ForwardingBackend : public Backend {
 public:
  // Owns `backend`.
  explicit ForwardingBackend(std::unique_ptr<Backend> backend)
      : owned_(std::move(backend)), backend_(owned_.get()) {}
  // Borrows `backend`: it must outlive this.
  explicit ForwardingBackend(Backend& backend) : backend_(&backend) {}

  BackendMemory& memory() override { return backend_->memory(); }
  Status Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) override;
  Status Broadcast(void* buffer, size_t count, DataType type, int root) override;
  Status Allgather(const void* send, void* recv, size_t count, DataType type) override;
  Status Alltoall(const void* send, void* recv, size_t count, DataType type) override;
  Status Alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                   const std::vector<size_t>& recv_counts, DataType type) override;
  Status Reducescatter(const void* send, void* recv, const std::vector<size_t>& counts, int rank,
                       DataType type, ReduceOp op) override;
  Status Barrier() override;
  Status BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) override;
  std::optional<std::chrono::nanoseconds> last_device_time() const override {
    return backend_->last_device_time();
  }
  bool RequestAbort() override { return backend_->RequestAbort(); }
  std::string Progress() override { return backend_->Progress(); }
  void Abandon() override { backend_->Abandon(); }
  std::optional<bool> mpi_threads_multiple() const override { return backend_->mpi_threads_multiple(); }

 protected:
  // What happens around every data call; this one just makes it.
  virtual Status Forward(const ForwardedCall& call) { return call.Run(); }
  // The wrapped backend.
  Backend& next() const { return *backend_; }

 private:
  template <typename Body>
  Status Pass(const char* op, size_t bytes, Body&& body) {
    return Forward(ForwardedCall(op, bytes, body));
  }

  const std::unique_ptr<Backend> owned_;  // null when borrowed
  Backend* const backend_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_FORWARDING_BACKEND_H_
