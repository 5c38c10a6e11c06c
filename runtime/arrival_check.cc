#include "runtime/arrival_check.h"

#include <vector>

#include "common/error_text.h"
#include "hvdrun/error_kind.h"

namespace hvdrun {

Status CheckArrival(KeyValueStore& store, const std::string& scope, int rank, int size,
                    std::chrono::milliseconds timeout) {
  std::vector<std::string> keys;
  keys.reserve(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) keys.push_back(scope + "arrived/" + std::to_string(r));

  Status announced = store.Set(keys[static_cast<size_t>(rank)], "1");
  if (!announced.ok()) {
    return Status::Error("rendezvous: rank " + std::to_string(rank) + ": " + announced.message());
  }
  Status waited = store.Wait(keys, timeout);
  if (waited.ok()) return waited;
  if (KindOf(waited) != ErrorKind::kOther) return waited;  // an elastic round that is over

  // Name the ranks that are missing now; a store that failed for another reason says so.
  std::vector<int> missing;
  for (int r = 0; r < size; ++r) {
    if (!store.Get(keys[static_cast<size_t>(r)], std::chrono::milliseconds(0)).ok()) missing.push_back(r);
  }
  if (missing.empty()) return Status::Error("rendezvous: " + waited.message());
  return Status::Error("rendezvous: " + RankListText(missing) + " of " + std::to_string(size) +
                       " did not arrive within " + DurationText(timeout) +
                       "; every rank must start and call Runtime::Init");
}

}  // namespace hvdrun
