#include "launcher/agents/srun_agent_command.h"

#include <gtest/gtest.h>

namespace hvdrun {
namespace {

TEST(SrunAgentCommand, OneTaskOnTheNodeWithItsOwnStreams) {
  SrunAgentCommand command = BuildSrunAgentCommand("n07", "/opt/hvdrun/bin/hvdrun-agent");
  EXPECT_EQ(command.argv,
            (std::vector<std::string>{"srun", "--nodes=1", "--ntasks=1", "--nodelist=n07", "--overlap",
                                      "--kill-on-bad-exit=1", "--mpi=none", "--unbuffered", "--quiet",
                                      "--job-name=hvdrun-agent", "/opt/hvdrun/bin/hvdrun-agent"}));
  EXPECT_EQ(command.env, (std::vector<std::string>{"SLURM_CPU_BIND=none"}));
}

}  // namespace
}  // namespace hvdrun
