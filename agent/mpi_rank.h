// `hvdrun-agent --mpi-rank -- command...`: the program that the mpirun of `hvdrun --mpi` starts for
// each rank. It gives the rank the place and environment agent mode gives it, runs it, and tells
// hvdrun how it ended through the job's key-value store (common/process/rank_exit_record.h).
//
// RunMpiRank:
//  - reads where mpirun placed this process (OMPI_COMM_WORLD_*), and fails with one line, starting
//    nothing, when that differs from hvdrun's layout (HVDRUN_MPI_LAYOUT) or a job value is missing;
//  - connects to hvdrun's rendezvous service (also before starting anything), starts the command
//    as agent mode does (rank_spawner.h: stdin from /dev/null, SIGKILL when the agent dies) with the
//    agent's stdout and stderr, which mpirun tags, and records the rank's pid and process group;
//  - places its host on the job's network by the rule hvdrun applies to the hosts whose
//    interfaces it sees (common/host/network_interfaces.h), since under mpirun it cannot see them: the
//    host's address is the local end of the route to hvdrun's rendezvous service, or with
//    --network-interface (HVDRUN_NETWORK_INTERFACES) its address on the chosen interface, and rank
//    0's there becomes every rank's MASTER_ADDR (rank 0's agent puts it in the store,
//    common/process/rank_exit_record.h);
//  - keeps the rank in the agent's own process group. Open MPI signals the process group of each
//    process it starts, and when it stops a job it SIGKILLs those groups as soon as one of its
//    processes exits (its odls_base_sigkill_timeout wait, 1 s, ends early on the first exit; seen
//    with Open MPI 4.1.4): a rank in a group of its own could outlive a SIGKILLed agent with
//    whatever it had started. In the agent's group, mpirun's SIGTERM and SIGKILL reach the rank
//    and its children directly;
//  - once told to stop (a SIGTERM, SIGINT or SIGHUP; from mpirun the rank got it too, from anyone
//    else the agent passes it on to its group), SIGKILLs the rank if it still runs after the kill
//    grace (1 s less 250 ms of mpirun's odls_base_sigkill_timeout, OMPI_MCA_odls_base_sigkill_timeout,
//    at most agent mode's 1 s), sends its exit record, and then waits to be SIGKILLed with its
//    group (for at most that timeout and a second more) rather than exit: an exit would cut short
//    mpirun's wait and kill the other agents before their records are sent;
//  - gets SIGTERM when mpirun dies (PR_SET_PDEATHSIG) and then SIGKILLs the rank at once;
//  - once the rank has ended, kills every process the rank left behind (the agent is a child
//    subreaper: they are its children), and exits with the rank's exit code, or by the rank's
//    signal (with core dumps off, so that the agent leaves no core of its own).
//
// Runs single-threaded and takes over SIGTERM, SIGINT, SIGHUP, SIGCHLD and SIGPIPE.
#ifndef HVDRUN_AGENT_MPI_RANK_H_
#define HVDRUN_AGENT_MPI_RANK_H_

#include <chrono>
#include <string>
#include <vector>

#include "common/environment_reader.h"
#include "common/placement/rank_assignment.h"
#include "common/placement/rank_environment.h"
#include "hvdrun/status.h"

namespace hvdrun {

// Where mpirun placed this process.
struct MpiPlacement {
  int rank = 0;
  int size = 0;
  int local_rank = 0;
  int local_size = 0;
};

// Reads OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK and _LOCAL_SIZE. The error names the variable.
StatusOr<MpiPlacement> ReadMpiPlacement(const EnvironmentLookup& lookup);

// The job's layout as `layout` (HVDRUN_MPI_LAYOUT's value) gives it, after checking that mpirun
// placed this process where the layout puts its rank: the same job size, local rank and local
// size. The error says both placements.
StatusOr<RankAssignment> CheckMpiPlacement(const std::string& layout, const MpiPlacement& placement);

// mpirun's SIGTERM-to-SIGKILL interval for an OMPI_MCA_odls_base_sigkill_timeout value (nullptr
// or not a whole number: Open MPI's default, 1 s), and the kill grace the agent takes from it.
std::chrono::milliseconds MpiSigkillTimeout(const char* sigkill_timeout);
std::chrono::milliseconds MpiKillGrace(std::chrono::milliseconds sigkill_timeout);

// Runs `command` as this process's rank. Returns the exit code: the rank's own, 126/127 when it
// could not start, 3 when the agent could not set it up (one line on stderr); does not return
// when the rank was killed by a signal (the agent dies by the same signal).
int RunMpiRank(const std::vector<std::string>& command);

}  // namespace hvdrun

#endif  // HVDRUN_AGENT_MPI_RANK_H_
