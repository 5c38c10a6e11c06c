// PlanRound: the next round of an elastic job, from the workers alive now and the hosts it may use.
// Pure functions.
//
// The rule (Horovod's, runner/elastic/driver.py, with the contract of docs/elastic.md):
//  - Hosts are ordered with the hosts of the live workers first, in the order those workers'
//    ranks had, then the other usable hosts in the order given (discovery's order).
//  - A live worker keeps a place when its host is usable and still has a slot for it (the first
//    workers of a host by their old rank order), and while the round has fewer than max_np places;
//    every other live worker is removed (it has no place in the round).
//  - New workers fill the free slots, host by host in that order, up to max_np (0: no bound), when
//    new workers may be started.
//  - Ranks are host-major: each host's kept workers in their old order, then its new ones. Local
//    rank is the place on the host; cross rank the host's index among the hosts that have that
//    local rank (rank_assignment.h's definitions).
#ifndef HVDRUN_LAUNCHER_ELASTIC_ROUND_PLANNER_H_
#define HVDRUN_LAUNCHER_ELASTIC_ROUND_PLANNER_H_

#include <functional>
#include <string>
#include <vector>

#include "common/placement/host_spec.h"

namespace hvdrun {

// A worker alive at the end of a round, in the round's rank order.
struct LiveWorker {
  std::string worker_id;
  std::string host;
};

// One worker's place in a round.
struct WorkerPlace {
  std::string worker_id;
  std::string host;
  bool is_new = false;  // to be started for this round
  int rank = 0, size = 0, local_rank = 0, local_size = 0, cross_rank = 0, cross_size = 0;
};

struct RoundPlan {
  std::vector<WorkerPlace> places;   // by rank
  std::vector<std::string> removed;  // live workers without a place, in their old order
};

// Names a new worker on `host` at local rank `local_rank` ("<host>/<slot>/<spawn counter>").
using NewWorkerId = std::function<std::string(const std::string& host, int local_rank)>;

// `usable`: the hosts the round may use (discovered or static, without blacklisted ones).
// `new_worker_id`: nullptr when no new worker may be started.
RoundPlan PlanRound(const std::vector<LiveWorker>& live, const std::vector<HostSlots>& usable, int max_np,
                    const NewWorkerId& new_worker_id);

// The value of `elastic/<r>/rank/<worker_id>`: "RANK SIZE LOCAL_RANK LOCAL_SIZE CROSS_RANK
// CROSS_SIZE HOSTNAME".
std::string PlaceValue(const WorkerPlace& place);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_ELASTIC_ROUND_PLANNER_H_
