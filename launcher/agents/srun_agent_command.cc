#include "launcher/agents/srun_agent_command.h"

#include "common/env_names.h"

namespace hvdrun {

SrunAgentCommand BuildSrunAgentCommand(const std::string& node, const std::string& agent_path) {
  SrunAgentCommand command;
  command.argv = {"srun",       "--nodes=1",
                  "--ntasks=1", "--nodelist=" + node,
                  "--overlap",  "--kill-on-bad-exit=1",
                  "--mpi=none", "--unbuffered",
                  "--quiet",    "--job-name=hvdrun-agent",
                  agent_path};
  command.env = {std::string(env::kSlurmCpuBind) + "=none"};
  return command;
}

}  // namespace hvdrun
