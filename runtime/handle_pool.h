// HandlePool: library handles that cost more to create and destroy than to use (the NCCL backend's
// CUDA events, one per submitted tensor), lent out and taken back for reuse instead.
//
//   auto pool = std::make_shared<HandlePool>(create_event, destroy_event);
//   StatusOr<HandlePool::Lease> event = HandlePool::Lend(pool);   // a free handle, or a new one
//   ... use event.value().get() ...                               // the handle, as void*
//   // the lease's last copy going gives the handle back to the pool
//
// A lease may outlive everything but the pool's own state: each lease holds the pool, and the pool
// destroys its handles (every one it created, with `destroy`) when its last holder goes. Handles
// come back as they are: what a user recorded on one stays until the next user records anew.
//
// Thread-safe: Lend, and the end of a lease, from any thread.
//
// Inline, in a header: each backend module compiles a hidden copy of its own (one_line.h says why).
#ifndef HVDRUN_RUNTIME_HANDLE_POOL_H_
#define HVDRUN_RUNTIME_HANDLE_POOL_H_

#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun {

class HandlePool {
 public:
  // A lent handle; it goes back to the pool with the last copy.
  using Lease = std::shared_ptr<void>;
  // Makes a handle, or says in one line why it cannot.
  using Create = std::function<StatusOr<void*>()>;
  using Destroy = std::function<void(void*)>;

  HandlePool(Create create, Destroy destroy) : create_(std::move(create)), destroy_(std::move(destroy)) {}
  ~HandlePool() {
    for (void* handle : free_) destroy_(handle);
  }
  HandlePool(const HandlePool&) = delete;
  HandlePool& operator=(const HandlePool&) = delete;

  // A handle given back earlier, or a new one from `create` when none is free.
  static StatusOr<Lease> Lend(const std::shared_ptr<HandlePool>& pool) {
    void* handle = pool->TakeFree();
    if (handle == nullptr) {
      StatusOr<void*> created = pool->create_();
      if (!created.ok()) return created.status();
      handle = created.value();
    }
    return Lease(handle, [pool](void* given_back) { pool->GiveBack(given_back); });
  }

  // Handles given back and not lent out again.
  size_t free_count() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return free_.size();
  }

 private:
  void* TakeFree() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return nullptr;
    void* handle = free_.back();
    free_.pop_back();
    return handle;
  }

  void GiveBack(void* handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(handle);
  }

  const Create create_;
  const Destroy destroy_;
  mutable std::mutex mutex_;
  std::vector<void*> free_;  // GUARDED_BY(mutex_)
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_HANDLE_POOL_H_
