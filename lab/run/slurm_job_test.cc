#include "lab/run/slurm_job.h"

#include <gtest/gtest.h>

#include <map>

namespace hvdrun::lab {
namespace {

ExperimentConfig Parse(const std::string& text) {
  StatusOr<ExperimentConfig> config = ParseExperiment(text, "/labs/exp.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return config.ok() ? config.value() : ExperimentConfig{};
}

std::function<const char*(const char*)> Environment(const std::map<std::string, std::string>& variables) {
  return [variables](const char* name) -> const char* {
    auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  };
}

const std::map<std::string, std::string> kJob = {
    {"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", "n[1-3]"}, {"SLURM_TASKS_PER_NODE", "2(x3)"}};

constexpr const char* kNoHosts = "program: hvdrun-bench\nmatrix:\n  servers: [1, 2]\n";
constexpr const char* kHosts = "program: hvdrun-bench\nhosts: a,b\nmatrix:\n  servers: [1, 2]\n";

TEST(ChooseSlurmAllocation, InsideAnAllocationAnExperimentWithoutHostsRunsOnIt) {
  StatusOr<std::optional<SlurmAllocation>> chosen =
      ChooseSlurmAllocation(Parse(kNoHosts), false, Environment(kJob));
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  ASSERT_TRUE(chosen.value().has_value());
  EXPECT_EQ(chosen.value()->job_id, "42");
  EXPECT_EQ(chosen.value()->nodes, (std::vector<HostSlots>{{"n1", 2, ""}, {"n2", 2, ""}, {"n3", 2, ""}}));
}

TEST(ChooseSlurmAllocation, TheExperimentsHostsWinUnlessSlurmIsAsked) {
  StatusOr<std::optional<SlurmAllocation>> chosen =
      ChooseSlurmAllocation(Parse(kHosts), false, Environment(kJob));
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  EXPECT_FALSE(chosen.value().has_value());
  chosen = ChooseSlurmAllocation(Parse(kHosts), true, Environment(kJob));
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  ASSERT_TRUE(chosen.value().has_value());
  EXPECT_EQ(chosen.value()->nodes.size(), 3u);
}

TEST(ChooseSlurmAllocation, OutsideAnAllocation) {
  StatusOr<std::optional<SlurmAllocation>> chosen =
      ChooseSlurmAllocation(Parse(kNoHosts), false, Environment({}));
  ASSERT_TRUE(chosen.ok());
  EXPECT_FALSE(chosen.value().has_value());
  chosen = ChooseSlurmAllocation(Parse(kNoHosts), true, Environment({}));
  ASSERT_FALSE(chosen.ok());
  EXPECT_EQ(chosen.status().message(),
            "--slurm: not inside a Slurm allocation (SLURM_JOB_ID is not set); submit the experiment with "
            "sbatch (hvdrun-lab sbatch /labs/exp.yaml > job.sh; sbatch job.sh) or run it under salloc");
}

TEST(ChooseSlurmAllocation, MalformedVariablesAreNamed) {
  std::map<std::string, std::string> job = kJob;
  job["SLURM_TASKS_PER_NODE"] = "two";
  StatusOr<std::optional<SlurmAllocation>> chosen =
      ChooseSlurmAllocation(Parse(kNoHosts), false, Environment(job));
  ASSERT_FALSE(chosen.ok());
  EXPECT_NE(chosen.status().message().find("SLURM_TASKS_PER_NODE='two'"), std::string::npos)
      << chosen.status().message();
}

TEST(CheckSlurmTimeLimit, SlurmsFormats) {
  for (const char* ok : {"30", "10:00", "1:30:00", "2-0", "2-12:00", "1-00:00:00"}) {
    EXPECT_TRUE(CheckSlurmTimeLimit(ok).ok()) << ok;
  }
  for (const char* bad : {"", "1h", "1:2:3:4", "-5", "1-", "a-1", "1::2"}) {
    Status status = CheckSlurmTimeLimit(bad);
    ASSERT_FALSE(status.ok()) << bad;
    EXPECT_EQ(status.message(), "--time '" + std::string(bad) +
                                    "': not a Slurm time limit (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or "
                                    "D-HH:MM:SS)");
  }
}

TEST(BuildSbatchScript, NodesAndTasksOfTheLargestCell) {
  ExperimentConfig config = Parse(R"(name: scaling
program: hvdrun-bench
matrix:
  backend: [gloo, mpi]
  processes_per_server: [1, 2, 4]
  servers: [1, 2, 3]
exclude:
  - {processes_per_server: 4, servers: [2, 3]}
)");
  MachineFacts machine;
  machine.slurm = AllocationForSubmission(config);
  EXPECT_EQ(machine.slurm->nodes.size(), 3u);
  StatusOr<Matrix> matrix = ExpandMatrix(config, machine);
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  SbatchOptions options;
  options.lab_path = "/opt/hvdrun/bin/hvdrun-lab";
  options.experiment_path = "/labs/exp.yaml";
  options.results = "/home/student/lab results";
  options.time_limit = "1:30:00";
  options.partition = "gpu";
  EXPECT_EQ(
      BuildSbatchScript(config, matrix.value(), options),
      "#!/bin/sh\n"
      "#SBATCH --job-name=scaling\n"
      "#SBATCH --nodes=3\n"
      "#SBATCH --ntasks-per-node=4\n"
      "#SBATCH --time=1:30:00\n"
      "#SBATCH --output=scaling-%j.out\n"
      "#SBATCH --partition=gpu\n"
      "# Written by hvdrun-lab sbatch from /labs/exp.yaml: 14 cells, the largest on 3 nodes with 4 "
      "processes per node. Each cell runs on the first nodes of the allocation it needs.\n"
      "exec /opt/hvdrun/bin/hvdrun-lab run /labs/exp.yaml --slurm --results '/home/student/lab results'\n");

  // Without a time, partition or output given, only the output is written, named after the job;
  // the nodes are those of the largest cell left after `exclude`.
  config = Parse(
      "name: one\nprogram: p\nmatrix:\n  np: [1, 2]\n  servers: [1, 2]\nexclude:\n  - {np: 1, servers: 2}\n");
  machine.slurm = AllocationForSubmission(config);
  matrix = ExpandMatrix(config, machine);
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  options = {};
  options.lab_path = "hvdrun-lab";
  options.experiment_path = "/e.yaml";
  options.results = "/r";
  options.force = true;
  EXPECT_EQ(
      BuildSbatchScript(config, matrix.value(), options),
      "#!/bin/sh\n"
      "#SBATCH --job-name=one\n"
      "#SBATCH --nodes=2\n"
      "#SBATCH --ntasks-per-node=2\n"
      "#SBATCH --output=one-%j.out\n"
      "# Written by hvdrun-lab sbatch from /labs/exp.yaml: 3 cells, the largest on 2 nodes with 2 processes "
      "per node. Each cell runs on the first nodes of the allocation it needs.\n"
      "exec hvdrun-lab run /e.yaml --slurm --results /r --force\n");
}

}  // namespace
}  // namespace hvdrun::lab
