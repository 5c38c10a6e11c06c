// SpawnRank: starts one rank's program the way hvdrun promises.
//
// The program runs in a new process group of its own (so that the agent can stop it and
// everything it started with one killpg), with stdin from /dev/null, stdout and stderr on fresh
// pipes, default signal dispositions and an empty signal mask, the launch's environment entries
// set on top of the agent's environment, and the launch's working directory. argv is passed to
// execvp unchanged: no shell sees it. The rank also gets SIGKILL if the agent dies.
//
// Not thread-safe: it forks, and the agent is single-threaded.
#ifndef HVDRUN_AGENT_RANK_SPAWNER_H_
#define HVDRUN_AGENT_RANK_SPAWNER_H_

#include <sys/types.h>

#include <string>

#include "common/agent_protocol.h"
#include "common/file_descriptor.h"

namespace hvdrun {

struct SpawnedRank {
  // The rank's pid, which is also its process group id; -1 when the spawn failed.
  pid_t pid = -1;
  UniqueFd stdout_fd;  // non-blocking read ends
  UniqueFd stderr_fd;
  // Set when the program could not be started; `error` then says why in one line. A child that
  // failed its exec has already been reaped.
  protocol::SpawnError spawn_error = protocol::SpawnError::kNone;
  std::string error;
};

SpawnedRank SpawnRank(const protocol::RankLaunch& launch);

}  // namespace hvdrun

#endif  // HVDRUN_AGENT_RANK_SPAWNER_H_
