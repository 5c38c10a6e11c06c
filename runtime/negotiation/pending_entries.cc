#include "runtime/negotiation/pending_entries.h"

#include <utility>

#include "common/progress/rank_board.h"

namespace hvdrun {

bool Cacheable(const TensorRequest& request) {
  return !request.name.empty() && request.name.front() != '(' &&
         request.kind != CollectiveKind::kAllgatherv && request.kind != CollectiveKind::kAlltoallv;
}

std::string FeedbackName(const PendingEntry& entry) {
  return Cacheable(entry.request) && !entry.stand_in ? entry.request.name : std::string();
}

void PendingEntries::Add(PendingEntry entry) {
  order_of_[entry.request.name] = next_;
  by_order_.emplace(next_++, std::move(entry));
}

void PendingEntries::Complete(const std::string& name, const Status& status) {
  auto found = order_of_.find(name);
  if (found == order_of_.end()) return;
  auto node = by_order_.extract(found->second);
  order_of_.erase(found);
  PendingEntry& entry = node.mapped();
  progress::PublishPhase(entry.request.progress_sequence,
                         status.ok() ? protocol::CollectivePhase::kDone : protocol::CollectivePhase::kFailed);
  release_(name, entry.state);
  entry.state->Complete(status);
}

void PendingEntries::FailAll(const Status& status) {
  for (auto& [order, entry] : by_order_) {
    progress::PublishPhase(entry.request.progress_sequence, protocol::CollectivePhase::kFailed);
    entry.state->Complete(status);
  }
  by_order_.clear();
  order_of_.clear();
}

}  // namespace hvdrun
