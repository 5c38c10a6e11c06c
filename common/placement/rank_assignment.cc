#include "common/placement/rank_assignment.h"

#include <algorithm>

namespace hvdrun {

StatusOr<RankAssignment> RankAssignment::Assign(const std::vector<HostSlots>& hosts, int num_ranks) {
  if (num_ranks < 1) {
    return Status::Error("-np: the number of processes must be at least 1, got " + std::to_string(num_ranks));
  }
  int total = TotalSlots(hosts);
  if (num_ranks > total) {
    return Status::Error("-np " + std::to_string(num_ranks) + " is more than the " + std::to_string(total) +
                         " slots of the hosts given; add hosts or slots, or lower -np");
  }
  RankAssignment assignment;
  int next_rank = 0;
  for (const HostSlots& entry : hosts) {
    if (next_rank == num_ranks) break;
    HostRanks host{entry.host, {}, entry.user};
    int count = std::min(entry.slots, num_ranks - next_rank);
    int host_index = static_cast<int>(assignment.hosts_.size());
    for (int local = 0; local < count; ++local) {
      RankPlacement placement;
      placement.rank = next_rank;
      placement.host_index = host_index;
      placement.local_rank = local;
      placement.local_size = count;
      host.ranks.push_back(next_rank);
      assignment.ranks_.push_back(placement);
      ++next_rank;
    }
    assignment.hosts_.push_back(std::move(host));
  }
  // Cross groups: hosts are visited in order, so a host's position among the hosts that have a
  // given local rank is the number of earlier hosts that have it.
  std::vector<int> hosts_with_local_rank;
  for (const RankPlacement& placement : assignment.ranks_) {
    if (static_cast<int>(hosts_with_local_rank.size()) <= placement.local_rank) {
      hosts_with_local_rank.resize(placement.local_rank + 1, 0);
    }
    ++hosts_with_local_rank[placement.local_rank];
  }
  std::vector<int> seen(hosts_with_local_rank.size(), 0);
  for (RankPlacement& placement : assignment.ranks_) {
    placement.cross_rank = seen[placement.local_rank]++;
    placement.cross_size = hosts_with_local_rank[placement.local_rank];
  }
  return assignment;
}

}  // namespace hvdrun
