// WatchedBackend: a Backend in front of another that tells a CollectiveWatchdog of every call it
// passes on (runtime/collective_watchdog.h), so that a call that does not come back is named while
// it is stuck. The Runtime puts it in front of its data backend (shared memory included) whenever
// the watchdog is on; it changes nothing else: same memory, same results, same errors but for a call
// the watchdog aborted.
//
// As every Backend: used by one collective thread; RequestAbort from any thread.
#ifndef HVDRUN_RUNTIME_WATCHED_BACKEND_H_
#define HVDRUN_RUNTIME_WATCHED_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/collective_watchdog.h"

namespace hvdrun {

class WatchedBackend final : public Backend {
 public:
  WatchedBackend(std::unique_ptr<Backend> backend, WatchdogSettings settings);
  // Watches `backend` without owning it: it must outlive this.
  WatchedBackend(Backend& backend, WatchdogSettings settings);

  // What the next calls are, for messages (WatchedCall::name), until set again.
  void set_label(std::string label) { label_ = std::move(label); }

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
  bool RequestAbort() override { return backend_->RequestAbort(); }
  std::string Progress() override { return backend_->Progress(); }

 private:
  // Runs `body` (the call to the backend) between the watchdog's Enter and Exit.
  template <typename Body>
  Status Watched(const char* op, size_t bytes, Body&& body);

  // Declared before the watchdog, destroyed after it: the watchdog's thread may ask it to abort.
  const std::unique_ptr<Backend> owned_;  // null when borrowed
  Backend* const backend_;
  CollectiveWatchdog watchdog_;
  std::string label_;
};

// Sets the label of `backend`'s next calls when it is a WatchedBackend; does nothing otherwise.
void LabelWatchedCalls(Backend& backend, std::string label);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_WATCHED_BACKEND_H_
