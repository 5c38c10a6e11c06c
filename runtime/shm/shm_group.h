// ShmGroup: the local ranks of one host that share a segment (runtime/shm/shm_segment.h), and the
// limits their bootstrap and barriers keep to.
#ifndef HVDRUN_RUNTIME_SHM_SHM_GROUP_H_
#define HVDRUN_RUNTIME_SHM_SHM_GROUP_H_

#include <chrono>
#include <string>

namespace hvdrun {

struct ShmGroup {
  int local_rank = 0;
  int local_size = 1;
  int rank = 0;  // this rank's place in the job, for errors
  // Where in the job's store the ranks of this host exchange their pids, the socket's name and
  // their outcomes: the same for the host's ranks, unique per host and Runtime instance.
  std::string store_prefix;
  // How long bootstrapping may wait for a local rank.
  std::chrono::milliseconds timeout{60000};
  // How long one barrier may wait for a live local rank (BackendContext::collective_limit); zero:
  // as long as it takes (a rank busy in user code is no failure).
  std::chrono::milliseconds barrier_limit{0};
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_SHM_SHM_GROUP_H_
