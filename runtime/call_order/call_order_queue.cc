#include "runtime/call_order/call_order_queue.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "common/progress/rank_board.h"
#include "runtime/collective_state.h"
#include "runtime/request/run_request.h"

namespace hvdrun {
namespace {

// Marks `request` failed on the progress board, without running it, and returns `status`.
Status Refused(const TensorRequest& request, Status status) {
  progress::PublishPhase(request.progress_sequence, protocol::CollectivePhase::kFailed);
  return status;
}

}  // namespace

CollectiveHandle CallOrderQueue::Submit(Pending pending) {
  auto state = std::make_shared<CollectiveHandle::State>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_.ok()) return CollectiveHandle::State::Completed(Refused(pending.request, broken_));
    pending.state = state;
    queue_.push_back(std::move(pending));
  }
  changed_.notify_all();
  return CollectiveHandle(std::move(state));
}

Status CallOrderQueue::Run(Pending pending) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!broken_.ok()) return Refused(pending.request, broken_);
    if (queue_.empty() && active_ == 0) {
      ++active_;
      lock.unlock();
      return RunInline(pending);
    }
    pending.state = std::make_shared<CollectiveHandle::State>();
    queue_.push_back(pending);
  }
  changed_.notify_all();
  return CollectiveHandle(std::move(pending.state)).Wait();
}

Status CallOrderQueue::RunAfterQueue(const Pending& pending) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !broken_.ok() || (queue_.empty() && active_ == 0); });
    if (!broken_.ok()) return Refused(pending.request, broken_);
    ++active_;
  }
  return RunInline(pending);
}

Status CallOrderQueue::RunInline(const Pending& pending) {
  Status status = run_(pending);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --active_;
    if (!status.ok() && broken_.ok()) broken_ = status;
  }
  changed_.notify_all();
  return status;
}

void CallOrderQueue::RunQueued() {
  while (true) {
    Pending next;
    Status broken;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [this] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) break;
      next = std::move(queue_.front());
      queue_.pop_front();
      broken = broken_;
      ++active_;
    }
    Status result = broken.ok() ? run_(next) : Refused(next.request, broken);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --active_;
      if (!result.ok() && broken_.ok()) broken_ = result;
    }
    changed_.notify_all();
    next.state->Complete(std::move(result));
  }
}

void CallOrderQueue::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
}

void CallOrderQueue::Break(const Status& status) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (broken_.ok()) broken_ = status;
  }
  changed_.notify_all();
}

Status CallOrderQueue::broken() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return broken_;
}

Status RunInCallOrder(Backend& backend, CompressedAllreduce& compressed, int rank, int size,
                      const TensorRequest& request, const void* send, void* recv) {
  if (request.kind != CollectiveKind::kAllgatherv) {
    return RunRequest(backend, compressed, request, send, recv, rank, /*feedback_name=*/"");
  }
  const auto mine = static_cast<int64_t>(request.count);
  std::vector<int64_t> counts(static_cast<size_t>(size));
  Status status = backend.Allgather(&mine, counts.data(), 1, DataType::kInt64);
  if (!status.ok()) return status;
  TensorRequest gathered = request;
  gathered.counts.assign(counts.begin(), counts.end());
  return RunRequest(backend, compressed, gathered, send, recv, rank, /*feedback_name=*/"");
}

}  // namespace hvdrun
