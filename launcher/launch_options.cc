#include "launcher/launch_options.h"

#include "common/env_names.h"

namespace hvdrun {

const char* AgentStartName(AgentStart start) {
  switch (start) {
    case AgentStart::kSsh:
      return "ssh";
    case AgentStart::kSlurm:
      return "slurm";
    case AgentStart::kLocal:
      return "local";
  }
  return "ssh";
}

std::string DescribeAgentStart(const LaunchOptions& options) {
  std::string text = AgentStartName(options.agent_start);
  if (!options.slurm) return text;
  return text + " (Slurm job " + options.slurm->job_id + ": " + env::kSlurmJobNodeList + "='" +
         options.slurm->node_list + "', " + env::kSlurmTasksPerNode + "='" + options.slurm->tasks_per_node +
         "')";
}

}  // namespace hvdrun
