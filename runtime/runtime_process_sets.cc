// Runtime's process-set calls (hvdrun/runtime.h); the sets themselves: runtime/process_set_table.h.
#include <string>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/elastic/membership.h"
#include "runtime/process_set_table.h"
#include "runtime/runtime_impl.h"

namespace hvdrun {

StatusOr<int> Runtime::AddProcessSet(const std::vector<int>& ranks) {
  // In an elastic job the round watch ends the set's sockets too, once hvdrun has re-formed the job.
  const OpenSocketTable before = elastic_ != nullptr ? OpenSockets() : OpenSocketTable();
  StatusOr<int> added = sets_->Add(ranks);
  if (elastic_ != nullptr && added.ok()) elastic_->WatchMore(before, OpenSockets());
  return added;
}

Status Runtime::RemoveProcessSet(int process_set) { return sets_->Remove(process_set); }

StatusOr<int> Runtime::ProcessSetRank(int process_set) const {
  if (process_set == 0) return rank();
  StatusOr<std::shared_ptr<ProcessSet>> set = sets_->Member(process_set, "ProcessSetRank");
  if (!set.ok()) return set.status();
  return set.value()->rank;
}

StatusOr<int> Runtime::ProcessSetSize(int process_set) const {
  if (process_set == 0) return size();
  StatusOr<std::shared_ptr<ProcessSet>> set = sets_->Find(process_set);
  if (!set.ok()) return Status::Error("ProcessSetSize: " + set.status().message());
  return static_cast<int>(set.value()->ranks.size());
}

StatusOr<bool> Runtime::ProcessSetIncluded(int process_set) const {
  if (process_set == 0) return true;
  StatusOr<std::shared_ptr<ProcessSet>> set = sets_->Find(process_set);
  if (!set.ok()) return Status::Error("ProcessSetIncluded: " + set.status().message());
  return set.value()->engine != nullptr;
}

std::vector<int> Runtime::ProcessSetIds() const {
  std::vector<int> ids = sets_->Ids();
  ids.insert(ids.begin(), 0);
  return ids;
}

StatusOr<std::vector<int>> Runtime::ProcessSetRanks(int process_set) const {
  if (process_set == 0) {
    std::vector<int> all(static_cast<size_t>(size()));
    for (int rank = 0; rank < size(); ++rank) all[static_cast<size_t>(rank)] = rank;
    return all;
  }
  StatusOr<std::shared_ptr<ProcessSet>> set = sets_->Find(process_set);
  if (!set.ok()) return Status::Error("ProcessSetRanks: " + set.status().message());
  return set.value()->ranks;
}

}  // namespace hvdrun
