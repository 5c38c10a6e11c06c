// RankAssignment: which rank runs on which host, and each rank's place in the job.
//
// Ranks are assigned host-major, as horovodrun and `mpirun -map-by slot` do: the first host's
// slots take ranks 0..k-1, the next host's the following ones. With fewer ranks than slots the
// hosts fill in order, and hosts left without a rank are not part of the job.
//
// cross_rank and cross_size follow Horovod: the ranks that share a local_rank form a "cross"
// group across hosts; cross_rank is a host's position in it, cross_size its length.
#ifndef HVDRUN_COMMON_PLACEMENT_RANK_ASSIGNMENT_H_
#define HVDRUN_COMMON_PLACEMENT_RANK_ASSIGNMENT_H_

#include <string>
#include <vector>

#include "common/placement/host_spec.h"
#include "hvdrun/status.h"

namespace hvdrun {

struct RankPlacement {
  int rank = 0;
  int host_index = 0;  // index into RankAssignment::hosts()
  int local_rank = 0;
  int local_size = 0;
  int cross_rank = 0;
  int cross_size = 0;
};

struct HostRanks {
  std::string host;
  std::vector<int> ranks;  // ascending global ranks placed on this host
  std::string user{};      // SSH login from `user@host`; empty when none was given
};

class RankAssignment {
 public:
  // Places `num_ranks` ranks on `hosts`. Fails when num_ranks < 1 or exceeds the total slots;
  // the message names both numbers.
  static StatusOr<RankAssignment> Assign(const std::vector<HostSlots>& hosts, int num_ranks);

  int size() const { return static_cast<int>(ranks_.size()); }
  const RankPlacement& placement(int rank) const { return ranks_.at(rank); }
  const std::vector<RankPlacement>& ranks() const { return ranks_; }
  // Only hosts that received at least one rank, in assignment order.
  const std::vector<HostRanks>& hosts() const { return hosts_; }

 private:
  std::vector<RankPlacement> ranks_;
  std::vector<HostRanks> hosts_;
};

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PLACEMENT_RANK_ASSIGNMENT_H_
