// SpawnRank: starts one rank's program the way hvdrun promises, through SpawnProcess
// (common/process/process_spawner.h).
//
// The program runs in a new process group of its own (so that the agent can stop it and
// everything it started with one killpg; under mpirun it stays in the agent's, see
// RankSpawnOptions), with stdin from /dev/null, stdout and stderr on fresh pipes (or the agent's
// own, with OutputCapture::kInherit), default signal dispositions and an empty signal mask, the
// launch's environment entries set on top of the agent's environment, and the launch's working
// directory. argv is passed as execvp would pass it: no shell sees it, and a name without '/' is
// looked up in the PATH of the rank's environment. The rank gets SIGKILL if the agent dies.
//
// The agent reaps its ranks itself (waitpid(-1), as their subreaper): a SpawnedRank holds a pid,
// not a ChildProcess. Not thread-safe: the parent-death signal follows the calling thread, and the
// agent is single-threaded.
#ifndef HVDRUN_AGENT_RANK_SPAWNER_H_
#define HVDRUN_AGENT_RANK_SPAWNER_H_

#include <sys/types.h>

#include <string>

#include "common/process/file_descriptor.h"
#include "common/protocol/agent_protocol.h"

namespace hvdrun {

struct SpawnedRank {
  // The rank's pid, which is also its process group id with own_process_group; -1 when the spawn
  // failed.
  pid_t pid = -1;
  UniqueFd stdout_fd;  // non-blocking read ends; invalid with OutputCapture::kInherit
  UniqueFd stderr_fd;
  // Set when the program could not be started; `error` then says why in one line (docs/protocol.md,
  // RankExited). A child that failed its exec has already been reaped.
  protocol::SpawnError spawn_error = protocol::SpawnError::kNone;
  std::string error;
};

enum class OutputCapture {
  kPipes,    // stdout and stderr on fresh pipes, whose read ends SpawnedRank holds
  kInherit,  // the agent's own stdout and stderr (under mpirun, which tags and forwards them)
};

struct RankSpawnOptions {
  OutputCapture capture = OutputCapture::kPipes;
  // Whether the rank leads a new process group (agent mode), or stays in the agent's: under
  // mpirun, which signals the process group of each process it started, so that its SIGKILL
  // reaches the rank and what the rank started even when it kills the agent too.
  bool own_process_group = true;
};

SpawnedRank SpawnRank(const protocol::RankLaunch& launch, const RankSpawnOptions& options = {});

}  // namespace hvdrun

#endif  // HVDRUN_AGENT_RANK_SPAWNER_H_
