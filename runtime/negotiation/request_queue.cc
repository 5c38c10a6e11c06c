#include "runtime/negotiation/request_queue.h"

#include <utility>

namespace hvdrun {

CollectiveHandle RequestQueue::Submit(TensorRequest request, const void* send, void* recv,
                                      BackendMemory::ReadyMark ready,
                                      std::chrono::milliseconds stall_warning) {
  auto state = std::make_shared<CollectiveHandle::State>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_.ok()) return CollectiveHandle::State::Completed(broken_);
    if (stop_requested_) {
      return CollectiveHandle::State::Completed(
          Status::Error("'" + request.name + "': the runtime is closing"));
    }
    if (join_ != nullptr) {
      return CollectiveHandle::State::Completed(Status::Error(
          "'" + request.name + "': this rank has joined (Join) and submits nothing until Join returns"));
    }
    auto [holder, added] = names_.emplace(request.name, state);
    if (!added && !holder->second->queued()) {
      return CollectiveHandle::State::Completed(
          Status::Error("'" + request.name +
                        "' is already pending on this rank: a name may be reused only once "
                        "its collective has completed"));
    }
    holder->second = state;
    const Clock::time_point now = Clock::now();
    PendingEntry entry;
    entry.request = std::move(request);
    entry.send = send;
    entry.recv = recv;
    entry.state = state;
    entry.ready = std::move(ready);
    entry.submitted = now;
    entry.next_census = now + stall_warning;
    incoming_.push_back(std::move(entry));
  }
  arrived_.notify_all();
  return CollectiveHandle(std::move(state));
}

StatusOr<ReadinessTable::JoinDone> RequestQueue::Join(uint64_t unnamed_calls) {
  auto state = std::make_shared<CollectiveHandle::State>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_.ok()) return broken_;
    if (stop_requested_) return Status::Error("Join: the runtime is closing");
    if (join_ != nullptr) return Status::Error("Join: this rank is already joining, on another thread");
    join_ = state;
    join_unnamed_calls_ = unnamed_calls;
    join_done_ = {};
  }
  arrived_.notify_all();
  Status status = CollectiveHandle(state).Wait();
  if (!status.ok()) return status;
  std::lock_guard<std::mutex> lock(mutex_);
  return join_done_;
}

void RequestQueue::RequestStop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
  }
  arrived_.notify_all();
}

Status RequestQueue::broken() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return broken_;
}

void RequestQueue::WaitForCycle(Clock::time_point busy_start, Clock::time_point idle_start, bool pending) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    // A joined rank stands in for the others' allreduces: it keeps their pace.
    const bool busy = pending || !incoming_.empty() || stop_requested_ || join_ != nullptr;
    const Clock::time_point start = busy ? busy_start : idle_start;
    if (Clock::now() >= start) return;
    arrived_.wait_until(lock, start);
  }
}

RequestQueue::Intake RequestQueue::Take() {
  Intake intake;
  std::lock_guard<std::mutex> lock(mutex_);
  intake.submitted.reserve(incoming_.size());
  for (PendingEntry& entry : incoming_) intake.submitted.push_back(std::move(entry));
  incoming_.clear();
  intake.stop_requested = stop_requested_;
  if (join_ != nullptr) intake.joining = join_unnamed_calls_;
  return intake;
}

void RequestQueue::Release(const std::string& name, const std::shared_ptr<CollectiveHandle::State>& state) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto holder = names_.find(name);
  if (holder != names_.end() && holder->second == state) names_.erase(holder);
}

void RequestQueue::CompleteJoin(const ReadinessTable::JoinDone& done) {
  std::shared_ptr<CollectiveHandle::State> state;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    join_done_ = done;
    state = std::move(join_);  // Submit and Join are open again
  }
  if (state != nullptr) state->Complete(Status::Ok());
}

void RequestQueue::Break(const Status& status) {
  std::deque<PendingEntry> incoming;
  std::shared_ptr<CollectiveHandle::State> join;
  Status first;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (broken_.ok()) broken_ = status;
    first = broken_;
    incoming.swap(incoming_);
    names_.clear();
    join = std::move(join_);
  }
  if (join != nullptr) join->Complete(first);
  for (PendingEntry& entry : incoming) entry.state->Complete(first);
}

}  // namespace hvdrun
