// The job's values as `hvdrun --mpi` hands them to each rank's `hvdrun-agent --mpi-rank`, through
// mpirun's environment: the encoding (the launcher's side, launcher/mpirun/mpi_command.h) and its
// decoding (the agent's, agent/mpi_rank.h) side by side, so that the two cannot drift apart
// (mpi_job_values_test.cc round-trips them).
//
// Encoded, in this order: HVDRUN_BACKEND, HVDRUN_JOB_ID, the rendezvous service's address, port
// and secret, MASTER_ADDR, MASTER_PORT, HVDRUN_MPI_LAYOUT; with a timeline HVDRUN_TIMELINE (and
// HOROVOD_TIMELINE_MARK_CYCLES=1); with --network-interface its names as HVDRUN_NETWORK_INTERFACES,
// NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME; then the user's -x variables, each of which replaces
// hvdrun's value of a variable it names (where it is) or follows. An unknown port (0) and every
// empty value are encoded as empty: --dry-run encodes an empty job, to print the names alone.
//
// Decoded: what the agent builds its rank's environment from (common/placement/rank_environment.h). Not the
// user's -x variables: the rank inherits them from the agent's environment, where mpirun put them.
// Not each host's place on the network: every agent decides its own (agent/mpi_rank.h). Whether
// the job runs under Slurm comes from the agent's own SLURM_JOB_ID. Errors name the variable, never
// the secret's value.
#ifndef HVDRUN_COMMON_MPI_JOB_VALUES_H_
#define HVDRUN_COMMON_MPI_JOB_VALUES_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/environment_reader.h"
#include "common/placement/rank_environment.h"
#include "hvdrun/status.h"

namespace hvdrun {

// (NAME, VALUE) pairs, in the order above.
using MpiJobVariables = std::vector<std::pair<std::string, std::string>>;

// The variables that carry `job` (its host_networks and user_variables are not encoded) and
// hvdrun's layout (MpiLayout, launcher/mpirun/mpi_command.h).
MpiJobVariables EncodeMpiJobValues(const JobEnvironment& job, const std::string& layout);

// Whether `name` is one of the variables hvdrun-agent --mpi-rank needs hvdrun's own value of (the
// rendezvous service's address, port and secret, and the layout), which -x must not replace.
bool IsMpiAgentVariable(std::string_view name);

// HVDRUN_MPI_LAYOUT's value (not checked here: CheckMpiPlacement, agent/mpi_rank.h, parses it).
StatusOr<std::string> DecodeMpiLayout(const EnvironmentLookup& lookup);
// The job: every value above but the layout and the user's variables (`exports` stays empty).
StatusOr<JobEnvironment> DecodeMpiJobEnvironment(const EnvironmentLookup& lookup);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_MPI_JOB_VALUES_H_
