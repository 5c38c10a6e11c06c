#include "runtime/negotiation/rank_join.h"

#include <chrono>
#include <memory>
#include <utility>

namespace hvdrun {

std::optional<Announcement> RankJoin::Announce(const std::optional<uint64_t>& joining, bool nothing_pending) {
  if (!joining || announced_ || !nothing_pending) return std::nullopt;
  announced_ = true;
  TensorRequest join;
  join.count = *joining;
  return Announcement{Announcement::Kind::kJoin, join};
}

Status RankJoin::AddStandIns(BackendMemory& memory, const std::vector<TensorRequest>& ready,
                             PendingEntries& pending) {
  for (const TensorRequest& request : ready) {
    if (request.kind != CollectiveKind::kAllreduce || pending.Contains(request.name)) continue;
    PendingEntry entry;
    entry.request = request;
    entry.stand_in = true;
    StatusOr<BackendMemory::Buffer> zeros = memory.Allocate(request.bytes());
    Status status = zeros.ok() ? memory.Zero(zeros.value().get(), request.bytes()) : zeros.status();
    if (!status.ok()) return status;
    entry.zeros = std::move(zeros).value();
    entry.send = entry.recv = entry.zeros.get();
    entry.state = std::make_shared<CollectiveHandle::State>();
    entry.submitted = entry.next_census = std::chrono::steady_clock::now();
    pending.Add(std::move(entry));
  }
  return Status::Ok();
}

}  // namespace hvdrun
