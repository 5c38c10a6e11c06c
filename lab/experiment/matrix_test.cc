#include "lab/experiment/matrix.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "tests/e2e/scratch_dir.h"

namespace hvdrun::lab {
namespace {

ExperimentConfig Parse(const std::string& text) {
  StatusOr<ExperimentConfig> config = ParseExperiment(text, "exp.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return config.ok() ? config.value() : ExperimentConfig{};
}

MachineFacts NoGpus() {
  MachineFacts machine;
  machine.gpus_source = "no /dev/nvidia0";
  return machine;
}

TEST(Matrix, EveryCombinationInOdometerOrderLessTheExcluded) {
  ExperimentConfig config = Parse(R"(
program: p
hosts: localhost:4
matrix:
  backend: [gloo, mpi]
  np: [1, 2, 4]
  model: [resnet18, resnet50]
exclude:
  - {backend: mpi, np: 4}
  - {model: resnet18, np: [2, 4]}
)");
  StatusOr<Matrix> matrix = ExpandMatrix(config, NoGpus());
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  std::vector<std::string> cells;
  for (const Cell& cell : matrix->cells) cells.push_back(DescribeCell(cell));
  EXPECT_EQ(cells,
            (std::vector<std::string>{
                "backend=gloo np=1 servers=1 model=resnet18", "backend=gloo np=1 servers=1 model=resnet50",
                "backend=gloo np=2 servers=1 model=resnet50", "backend=gloo np=4 servers=1 model=resnet50",
                "backend=mpi np=1 servers=1 model=resnet18", "backend=mpi np=1 servers=1 model=resnet50",
                "backend=mpi np=2 servers=1 model=resnet50"}));
  EXPECT_EQ(matrix->excluded, 5);
  EXPECT_EQ(matrix->cells[2].id, "backend-gloo_np-2_servers-1_model-resnet50");
  EXPECT_EQ(CellValue(matrix->cells[2], "model"), "resnet50");
  EXPECT_EQ(CellValue(matrix->cells[2], "nothing"), "");
}

TEST(Matrix, CommandLineOfACell) {
  ExperimentConfig config = Parse(R"(
program: hvdrun-trainer
hosts: server1:4,server2:4
args: [--steps, 5]
env: {OMP_NUM_THREADS: 1}
matrix:
  np: [4]
  servers: [2]
  batch_size: [32]
  --synthetic: [true]
  --verbose: [false]
  fusion_threshold: [0]
)");
  StatusOr<Matrix> matrix = ExpandMatrix(config, NoGpus());
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  ASSERT_EQ(matrix->cells.size(), 1u);
  const Cell& cell = matrix->cells[0];
  EXPECT_EQ(cell.procs_per_server, 2);
  EXPECT_EQ(HvdrunArguments(cell, "/bin/hvdrun-trainer", "hvdrun", "logs"),
            (std::vector<std::string>{"-np",
                                      "4",
                                      "-H",
                                      "server1:2,server2:2",
                                      "--gloo",
                                      "-x",
                                      "OMP_NUM_THREADS=1",
                                      "-x",
                                      "HOROVOD_FUSION_THRESHOLD=0",
                                      "--results",
                                      "hvdrun",
                                      "--output-filename",
                                      "logs",
                                      "--",
                                      "/bin/hvdrun-trainer",
                                      "--steps",
                                      "5",
                                      "--batch-size",
                                      "32",
                                      "--synthetic"}));
}

TEST(Matrix, TheFusionAxisSetsHvdrunsFusionFlags) {
  ExperimentConfig config = Parse(R"(
program: hvdrun-trainer
matrix:
  np: [2]
  fusion: ["off", "on", horovod-0.20, 32/2.5, autotune]
)");
  StatusOr<Matrix> matrix = ExpandMatrix(config, NoGpus());
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  ASSERT_EQ(matrix->cells.size(), 5u);
  const std::vector<std::vector<std::string>> flags = {
      {"--fusion-threshold-mb", "0", "--cycle-time-ms", "1"},
      {"--fusion-threshold-mb", "128", "--cycle-time-ms", "1"},
      {"--fusion-threshold-mb", "64", "--cycle-time-ms", "5"},
      {"--fusion-threshold-mb", "32", "--cycle-time-ms", "2.5"},
      // No fusion flag: a value given explicitly would stay fixed (docs/autotune.md).
      {"--autotune", "--autotune-log-file", "autotune.csv"}};
  for (size_t i = 0; i < flags.size(); ++i) {
    std::vector<std::string> expected = {"-np", "2", "-H", "localhost:2", "--gloo"};
    expected.insert(expected.end(), flags[i].begin(), flags[i].end());
    expected.insert(expected.end(), {"--results", "hvdrun", "--output-filename", "logs", "--", "/bin/t"});
    EXPECT_EQ(HvdrunArguments(matrix->cells[i], "/bin/t", "hvdrun", "logs"), expected) << i;
  }
  EXPECT_EQ(CellValue(matrix->cells[2], "fusion"), "horovod-0.20");
  EXPECT_EQ(CellValue(matrix->cells[4], "fusion"), "autotune");
}

TEST(Matrix, TheCompressionAxisSetsHvdrunsCompressionFlags) {
  ExperimentConfig config = Parse(R"(
program: hvdrun-trainer
matrix:
  np: [2]
  compression: [none, fp8, fp8-naive]
)");
  StatusOr<Matrix> matrix = ExpandMatrix(config, NoGpus());
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  ASSERT_EQ(matrix->cells.size(), 3u);
  const std::vector<std::vector<std::string>> flags = {
      {"--compression", "none"},
      {"--compression", "fp8"},
      {"--compression", "fp8", "--fp8-scaling", "off", "--fp8-safe-cast", "off", "--fp8-float32-sums", "off",
       "--error-feedback", "off"}};
  for (size_t i = 0; i < flags.size(); ++i) {
    std::vector<std::string> expected = {"-np", "2", "-H", "localhost:2", "--gloo"};
    expected.insert(expected.end(), flags[i].begin(), flags[i].end());
    expected.insert(expected.end(), {"--results", "hvdrun", "--output-filename", "logs", "--", "/bin/t"});
    EXPECT_EQ(HvdrunArguments(matrix->cells[i], "/bin/t", "hvdrun", "logs"), expected) << i;
  }
  EXPECT_EQ(CellValue(matrix->cells[2], "compression"), "fp8-naive");
}

TEST(Matrix, ProcessesPerServerSetsNpFromServers) {
  ExperimentConfig config = Parse(R"(
program: p
hosts: [a:4, b:4, c:4]
matrix:
  servers: [1, 3]
  processes_per_server: [4]
)");
  StatusOr<Matrix> matrix = ExpandMatrix(config, NoGpus());
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  ASSERT_EQ(matrix->cells.size(), 2u);
  EXPECT_EQ(matrix->cells[1].num_proc, 12);
  EXPECT_EQ(HvdrunArguments(matrix->cells[1], "p", "r", "l")[3], "a:4,b:4,c:4");
}

TEST(Matrix, WithoutHostsACellRunsOnLocalhost) {
  StatusOr<Matrix> matrix = ExpandMatrix(Parse("program: p\nmatrix: {np: [3]}\n"), NoGpus());
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  EXPECT_EQ(HvdrunArguments(matrix->cells[0], "p", "r", "l")[3], "localhost:3");
}

struct ImpossibleCell {
  const char* what;
  const char* text;
  const char* error;
};

const ImpossibleCell kImpossibleCells[] = {
    {"np above the slots", "program: p\nhosts: localhost:2\nmatrix:\n  np: [1, 2, 4]\n",
     "exp.yaml:4:14: 4 processes per server need as many slots on host 'localhost', which has 2; lower the "
     "count, "
     "add slots, or exclude the cell (cell backend=gloo np=4 servers=1)"},
    {"more servers than hosts", "program: p\nhosts: a:2,b:2\nmatrix:\n  servers: [3]\n  np: [3]\n",
     "exp.yaml:4:13: servers 3 is more than the 2 hosts of the experiment (cell backend=gloo np=3 "
     "servers=3)"},
    {"servers without hosts", "program: p\nmatrix:\n  servers: [2]\n  np: [2]\n",
     "exp.yaml:3:13: servers 2 needs that many hosts, and the experiment names none; add hosts or hostfile "
     "(cell "
     "backend=gloo np=2 servers=2)"},
    {"uneven split", "program: p\nhosts: a:4,b:4\nmatrix:\n  servers: [2]\n  np: [3]\n",
     "exp.yaml:5:8: np 3 does not split evenly over 2 servers; use a multiple, or exclude the cell (cell "
     "backend=gloo "
     "np=3 servers=2)"},
    {"NCCL beyond the declared GPUs",
     "program: p\ngpus_per_server: 2\nmatrix:\n  backend: [gloo, nccl]\n  np: [4]\n",
     "exp.yaml:4:19: 'nccl' needs one GPU per process: 4 per server, but gpus_per_server is 2; exclude the "
     "cell (cell "
     "backend=nccl np=4 servers=1)"},
    {"NCCL with no GPU declared", "program: p\ngpus_per_server: 0\nmatrix:\n  backend: [nccl]\n",
     "exp.yaml:4:13: 'nccl' needs one GPU per process: 1 per server, but gpus_per_server is 0; exclude the "
     "cell (cell "
     "backend=nccl np=1 servers=1)"},
};

class ImpossibleCellTest : public testing::TestWithParam<ImpossibleCell> {};

TEST_P(ImpossibleCellTest, IsAnErrorAtTheValue) {
  StatusOr<Matrix> matrix = ExpandMatrix(Parse(GetParam().text), NoGpus());
  ASSERT_FALSE(matrix.ok()) << GetParam().what;
  EXPECT_EQ(matrix.status().message(), GetParam().error) << GetParam().what;
}

INSTANTIATE_TEST_SUITE_P(Table, ImpossibleCellTest, testing::ValuesIn(kImpossibleCells));

// processes_per_server × servers is counted in 64 bits and held to hvdrun's -np limit: it never
// wraps to a negative or zero -np (or to --ntasks-per-node=1 in an sbatch script).
TEST(Matrix, ProcessesPerServerTimesServersIsHeldToHvdrunsLimit) {
  for (const char* servers : {"2048", "4096"}) {
    const std::string text =
        std::string("program: p\nmatrix:\n  processes_per_server: [1048576]\n  servers: [") + servers + "]\n";
    StatusOr<Matrix> matrix = ExpandMatrix(Parse(text), NoGpus());
    ASSERT_FALSE(matrix.ok()) << servers;
    EXPECT_EQ(matrix.status().message(), "exp.yaml:3:26: processes_per_server 1048576 on " +
                                             std::string(servers) + " servers makes " +
                                             std::to_string(int64_t{1048576} * std::stoi(servers)) +
                                             " processes, more than hvdrun's 1048576 (cell backend=gloo "
                                             "processes_per_server=1048576 servers=" +
                                             servers + ")");
  }
  ExperimentConfig config = Parse("program: p\nmatrix:\n  processes_per_server: [1048576]\n  servers: [1]\n");
  StatusOr<Matrix> matrix = ExpandMatrix(config, NoGpus());
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  EXPECT_EQ(matrix->cells[0].num_proc, 1048576);
}

// `report` lists every run, made or not: an experiment is held to what a report can list.
TEST(Matrix, RunsOfAnExperimentAreBounded) {
  std::string values;
  for (int i = 0; i < 1000; ++i) values += (i == 0 ? "" : ", ") + std::to_string(i);
  StatusOr<Matrix> matrix =
      ExpandMatrix(Parse("program: p\nrepeats: 101\nmatrix:\n  --seed: [" + values + "]\n"), NoGpus());
  ASSERT_FALSE(matrix.ok());
  EXPECT_EQ(
      matrix.status().message(),
      "exp.yaml: 1000 cells of 101 runs each make 101000 runs, more than the 100000 hvdrun-lab makes of one "
      "experiment; exclude cells or lower repeats");
  matrix = ExpandMatrix(Parse("program: p\nrepeats: 100\nmatrix:\n  --seed: [" + values + "]\n"), NoGpus());
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
}

TEST(Matrix, ExcludingAnImpossibleCellMakesTheMatrixValid) {
  ExperimentConfig config =
      Parse("program: p\nhosts: localhost:2\nmatrix:\n  np: [1, 2, 4]\nexclude:\n  - {np: 4}\n");
  StatusOr<Matrix> matrix = ExpandMatrix(config, NoGpus());
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  EXPECT_EQ(matrix->cells.size(), 2u);
}

TEST(Matrix, GpuCellsWithoutGpusHereAreSkippedWithTheReason) {
  ExperimentConfig config = Parse(R"(
program: p
matrix:
  backend: [gloo, nccl]
  device: [cpu, cuda]
  np: [2]
)");
  StatusOr<Matrix> matrix = ExpandMatrix(config, NoGpus());
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  ASSERT_EQ(matrix->cells.size(), 4u);
  EXPECT_EQ(matrix->cells[0].skip_reason, "");  // gloo on the CPU
  EXPECT_EQ(matrix->cells[1].skip_reason,
            "'cuda' needs one GPU per process: 2 per server; this machine has 0 (no /dev/nvidia0)");
  EXPECT_EQ(matrix->cells[2].skip_reason,
            "'nccl' needs one GPU per process: 2 per server; this machine has 0 (no /dev/nvidia0)");
  MachineFacts two_gpus;
  two_gpus.gpus = 2;
  matrix = ExpandMatrix(config, two_gpus);
  ASSERT_TRUE(matrix.ok());
  for (const Cell& cell : matrix->cells) EXPECT_EQ(cell.skip_reason, "") << cell.id;
}

// hvdrun --mpi starts ranks across hosts (its mpirun's daemons reach them over ssh), so an MPI cell
// on several servers runs; the experiment's hvdrun options come before the axes' hvdrun flags.
TEST(Matrix, MpiCellsOnSeveralServersRunWithTheExperimentsHvdrunOptions) {
  ExperimentConfig config = Parse(R"(
program: p
hosts: [a:2, b:2]
hvdrun: {ssh_port: 2222, network_interface: data0}
matrix:
  backend: [gloo, mpi]
  servers: [1, 2]
  processes_per_server: [2]
  fusion: ['off']
)");
  StatusOr<Matrix> matrix = ExpandMatrix(config, NoGpus());
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  ASSERT_EQ(matrix->cells.size(), 4u);
  for (const Cell& cell : matrix->cells) EXPECT_EQ(cell.skip_reason, "") << cell.id;
  const Cell& mpi = matrix->cells[3];
  EXPECT_EQ(HvdrunArguments(mpi, "p", "r", "l"),
            (std::vector<std::string>{"-np", "4", "-H", "a:2,b:2", "--mpi", "--ssh-port", "2222",
                                      "--network-interface", "data0", "--fusion-threshold-mb", "0",
                                      "--cycle-time-ms", "1", "--results", "r", "--output-filename", "l",
                                      "--", "p"}));
}

TEST(Matrix, CellIdsAreUniqueDirectoryNames) {
  ExperimentConfig config = Parse("program: p\nmatrix:\n  --tag: ['a b', 'a-b', '../x']\n");
  StatusOr<Matrix> matrix = ExpandMatrix(config, NoGpus());
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  ASSERT_EQ(matrix->cells.size(), 3u);
  EXPECT_NE(matrix->cells[0].id, matrix->cells[1].id);
  EXPECT_EQ(matrix->cells[0].id.rfind("backend-gloo_np-1_servers-1_tag-a-b_", 0), 0u) << matrix->cells[0].id;
  EXPECT_EQ(matrix->cells[2].id, "backend-gloo_np-1_servers-1_tag-..-x");
  for (const Cell& cell : matrix->cells) EXPECT_EQ(cell.id.find('/'), std::string::npos);
}

TEST(Matrix, ResolvesTheProgram) {
  e2e::ScratchDir dir;
  std::string beside = dir.WriteFile("hvdrun-bench", "");
  ASSERT_EQ(::chmod(beside.c_str(), 0755), 0);
  ExperimentConfig config;
  config.path = "/etc/lab/exp.yaml";
  config.program = "hvdrun-bench";
  EXPECT_EQ(ResolveProgram(config, dir.path()), beside);
  EXPECT_EQ(ResolveProgram(config, "/nonexistent"), "hvdrun-bench");  // left for PATH
  config.program = "./bin/run.sh";
  EXPECT_EQ(ResolveProgram(config, dir.path()), "/etc/lab/bin/run.sh");
  config.program = "/opt/x";
  EXPECT_EQ(ResolveProgram(config, dir.path()), "/opt/x");
}

MachineFacts InSlurmJob(int nodes, int tasks_per_node) {
  MachineFacts machine = NoGpus();
  SlurmAllocation allocation;
  allocation.job_id = "42";
  allocation.node_list = "n[1-" + std::to_string(nodes) + "]";
  allocation.tasks_per_node = std::to_string(tasks_per_node) + "(x" + std::to_string(nodes) + ")";
  for (int i = 1; i <= nodes; ++i) allocation.nodes.push_back({"n" + std::to_string(i), tasks_per_node, ""});
  allocation.num_tasks = nodes * tasks_per_node;
  machine.slurm = allocation;
  return machine;
}

TEST(Matrix, InsideASlurmAllocationCellsUseItsFirstNodesThroughSrun) {
  // The experiment's own hosts give way to the allocation's nodes.
  ExperimentConfig config = Parse(R"(
program: hvdrun-bench
hosts: server1,server2
matrix:
  processes_per_server: [1, 2]
  servers: [1, 3]
)");
  StatusOr<Matrix> matrix = ExpandMatrix(config, InSlurmJob(4, 2));
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  ASSERT_EQ(matrix->cells.size(), 4u);
  ASSERT_TRUE(matrix->slurm.has_value());
  EXPECT_EQ(matrix->slurm->job_id, "42");
  const Cell& three = matrix->cells[3];
  EXPECT_EQ(three.hosts, (std::vector<HostSlots>{{"n1", 2, ""}, {"n2", 2, ""}, {"n3", 2, ""}}));
  std::vector<std::string> args = HvdrunArguments(three, "hvdrun-bench", "R", "L");
  EXPECT_EQ(args,
            (std::vector<std::string>{"-np", "6", "-H", "n1:2,n2:2,n3:2", "--gloo", "--launcher", "slurm",
                                      "--results", "R", "--output-filename", "L", "--", "hvdrun-bench"}));
  EXPECT_EQ(matrix->cells[0].hosts, (std::vector<HostSlots>{{"n1", 1, ""}}));
  // Outside an allocation the experiment's own hosts serve, and a cell cannot have more servers.
  StatusOr<Matrix> outside = ExpandMatrix(config, NoGpus());
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("servers 3 is more than the 2 hosts"), std::string::npos)
      << outside.status().message();
  StatusOr<Matrix> fitting = ExpandMatrix(
      Parse("program: p\nhosts: server1,server2\nmatrix:\n  processes_per_server: [1]\n  servers: [1, 2]\n"),
      NoGpus());
  ASSERT_TRUE(fitting.ok()) << fitting.status().message();
  EXPECT_FALSE(fitting->slurm.has_value());
}

TEST(Matrix, ACellLargerThanTheSlurmAllocationNamesBoth) {
  ExperimentConfig config = Parse("program: p\nmatrix:\n  np: [2]\n  servers: [1, 2]\n");
  StatusOr<Matrix> matrix = ExpandMatrix(config, InSlurmJob(1, 2));
  ASSERT_FALSE(matrix.ok());
  EXPECT_EQ(matrix.status().message(),
            "exp.yaml:4:16: servers 2 needs 2 nodes, and Slurm job 42 has 1 (SLURM_JOB_NODELIST='n[1-1]'); "
            "submit with -N 2 (hvdrun-lab sbatch), or exclude the cell (cell backend=gloo np=2 servers=2)");
  matrix = ExpandMatrix(config, InSlurmJob(2, 1));
  ASSERT_FALSE(matrix.ok());
  EXPECT_EQ(
      matrix.status().message(),
      "exp.yaml:3:8: 2 processes per server need as many tasks on node 'n1' of Slurm job 42, which has 1 "
      "(SLURM_TASKS_PER_NODE='1(x2)'); submit with --ntasks-per-node=2 (hvdrun-lab sbatch), or "
      "exclude the cell (cell backend=gloo np=2 servers=1)");
}

}  // namespace
}  // namespace hvdrun::lab
