#include "runtime/collective_state.h"

#include <utility>

#include "hvdrun/collective_handle.h"

namespace hvdrun {

void CollectiveHandle::State::Complete(Status result) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    status = std::move(result);
    done = true;
  }
  completed.notify_all();
}

void CollectiveHandle::State::SetQueued(BackendMemory::StreamWaiter queued_waiter) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    waiter = std::move(queued_waiter);
  }
  completed.notify_all();
}

bool CollectiveHandle::State::queued() const {
  std::lock_guard<std::mutex> lock(mutex);
  return done || waiter != nullptr;
}

CollectiveHandle CollectiveHandle::State::Completed(Status result) {
  auto state = std::make_shared<State>();
  state->status = std::move(result);
  state->done = true;
  return CollectiveHandle(std::move(state));
}

Status CollectiveHandle::Wait() {
  if (state_ == nullptr) return Status::Error("CollectiveHandle::Wait on a handle that holds no collective");
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->completed.wait(lock, [this] { return state_->done; });
  return state_->status;
}

Status CollectiveHandle::WaitOnStream(void* cuda_stream) {
  if (state_ == nullptr) {
    return Status::Error("CollectiveHandle::WaitOnStream on a handle that holds no collective");
  }
  BackendMemory::StreamWaiter waiter;
  {
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->completed.wait(lock, [this] { return state_->done || state_->waiter != nullptr; });
    if (state_->done) return state_->status;
    waiter = state_->waiter;
  }
  return waiter(cuda_stream);
}

bool CollectiveHandle::Ready() const {
  if (state_ == nullptr) return true;
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->done;
}

}  // namespace hvdrun
