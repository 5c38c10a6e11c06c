// The srun command that starts one host's hvdrun-agent inside a Slurm allocation (--launcher
// slurm), as Open MPI's plm/slurm starts its daemons:
//
//   SLURM_CPU_BIND=none srun --nodes=1 --ntasks=1 --nodelist=NODE --overlap --kill-on-bad-exit=1
//                            --mpi=none --unbuffered --quiet --job-name=hvdrun-agent AGENT
//
// One srun per node rather than one step of N tasks: srun merges its tasks' stdout into one
// stream, and each agent needs a control stream of its own (its stdin and stdout, srun's own).
// --overlap: the agent's step shares the node with any other step (mpirun's, a second hvdrun's), so
// that it never waits for resources. --unbuffered: slurmstepd forwards the agent's frames as soon as
// they are written rather than at a newline. --mpi=none: the agent is no MPI program.
// SLURM_CPU_BIND=none: neither the agent nor the ranks it starts are bound to the step's CPUs; the
// step has every CPU of the node (no --exact), which its ranks share. Pure.
#ifndef HVDRUN_LAUNCHER_AGENTS_SRUN_AGENT_COMMAND_H_
#define HVDRUN_LAUNCHER_AGENTS_SRUN_AGENT_COMMAND_H_

#include <string>
#include <vector>

namespace hvdrun {

struct SrunAgentCommand {
  std::vector<std::string> argv;  // argv[0] is "srun", looked up in PATH
  std::vector<std::string> env;   // NAME=VALUE set on top of hvdrun's environment
};

// The command for `node` (a node name of the allocation), running `agent_path` there.
SrunAgentCommand BuildSrunAgentCommand(const std::string& node, const std::string& agent_path);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_AGENTS_SRUN_AGENT_COMMAND_H_
