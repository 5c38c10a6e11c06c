// The shipped inter-node lab (configs/lab7-inter-node-cpu.yaml) on the test cluster
// (docs/testing-cluster.md) at a small size: 1, 2 and 4 servers with one process each, Gloo and MPI,
// ResNet-18 on tiny images for a few steps. The experiment file's `hvdrun:` section carries what
// reaches the servers (the cluster's user, key, known_hosts, the staged agent, the data network);
// hvdrun-lab runs in the launcher's namespace, is killed in the middle of the matrix, resumed, and
// the report is checked: the inter-node table, the environment table naming every server, and the
// step breakdown against the ranks' own reports.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/cluster/cluster_test.h"
#include "tests/e2e/console_output.h"
#include "tests/e2e/scratch_dir.h"
#include "tests/lab/installed_lab.h"

namespace hvdrun::cluster {
namespace {

namespace fs = std::filesystem;
using e2e::Contains;
using e2e::ProcessResult;
using std::chrono::milliseconds;

constexpr milliseconds kMatrixTimeout{240'000};

std::string ReplaceOnce(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "the shipped config no longer holds: " << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The cells' directories that hold a complete repeat-1, and those with a run under way (.partial).
struct Progress {
  int complete = 0;
  bool partial_started = false;
};

Progress ReadProgress(const std::string& cells_dir) {
  Progress progress;
  std::error_code error;
  for (const fs::directory_entry& cell : fs::directory_iterator(cells_dir, error)) {
    if (fs::exists(cell.path() / "repeat-1" / "run.json")) ++progress.complete;
    if (fs::exists(cell.path() / "repeat-1.partial" / "stdout.log")) progress.partial_started = true;
  }
  return progress;
}

class LabClusterTest : public ClusterTest {
 protected:
  static void SetUpTestSuite() { CreateCluster(4); }

  void TearDown() override {
    if (!has_cluster()) return;
    std::vector<pid_t> left = WaitUntilOnlySshds(milliseconds(15'000));
    EXPECT_TRUE(left.empty()) << "left running in the cluster:\n" << e2e::DescribeProcesses(left);
  }

  // configs/lab7-inter-node-cpu.yaml with the cluster's servers and SSH settings, at a small size.
  std::string Experiment() const {
    std::string text = e2e::ReadFileBytes(std::string(HVDRUN_LAB_CONFIGS_DIR) + "/lab7-inter-node-cpu.yaml");
    text = ReplaceOnce(text, "hostfile: hosts-lab7.txt", "hosts: [server1, server2, server3, server4]");
    text = ReplaceOnce(text, "  ssh_accept_new_host_keys: false\n",
                       "  ssh_user: root\n  ssh_identity_file: " + c().user_key() + "\n  ssh_known_hosts: " +
                           c().known_hosts() + "\n  agent_path: " + StagedProgram("hvdrun-agent") +
                           "\n  network_interface: data0\n");
    text = ReplaceOnce(text, "args: [--image-size, 224, --steps, 20, --warmup-steps, 5]",
                       "args: [--image-size, 32, --steps, 2, --warmup-steps, 1]");
    text = ReplaceOnce(text, "  model: resnet50", "  model: resnet18");
    text = ReplaceOnce(text, "  batch_size: 32", "  batch_size: 2\n  threads: 1");
    text = ReplaceOnce(text, "repeats: 3", "repeats: 1");
    return ReplaceOnce(text, "timeout: 1800", "timeout: 120");
  }
};

TEST_F(LabClusterTest, InterNodeLabEndToEnd) {
  if (::access(StagedProgram("hvdrun-trainer").c_str(), X_OK) != 0) {
    GTEST_SKIP() << "hvdrun-trainer is not installed (built only with libtorch)";
  }
  e2e::ScratchDir scratch;
  const std::string experiment = scratch.WriteFile("lab7-inter-node-cpu.yaml", Experiment());
  const std::string results = scratch.path() + "/results";
  const std::string dir = results + "/lab7-inter-node-cpu";
  const std::vector<std::string> run = {StagedProgram("hvdrun-lab"), "run", experiment, "--results", results};

  // Killed once the first cell is done and the second under way.
  {
    e2e::RunningProcess lab = StartInLauncher(run);
    const auto deadline = std::chrono::steady_clock::now() + kMatrixTimeout;
    Progress progress;
    while (std::chrono::steady_clock::now() < deadline) {
      progress = ReadProgress(dir + "/cells");
      if (progress.complete >= 1 && progress.partial_started) break;
      std::this_thread::sleep_for(milliseconds(50));
    }
    ASSERT_GE(progress.complete, 1) << "no run completed";
    ASSERT_TRUE(progress.partial_started) << "no second run got under way";
    std::this_thread::sleep_for(milliseconds(500));
    lab.Signal(SIGKILL);
    ProcessResult killed = lab.Wait(milliseconds(10'000));
    EXPECT_EQ(killed.term_signal, SIGKILL) << killed;
    // hvdrun gets SIGTERM when hvdrun-lab dies, and stops its ranks on every server.
    std::vector<pid_t> left = WaitUntilNone(
        [&](pid_t pid) {
          const std::string name = ProgramName(pid);
          return name == "hvdrun-trainer" || name == "hvdrun-agent" || name == "orted" || name == "prted";
        },
        milliseconds(20'000));
    EXPECT_TRUE(left.empty()) << e2e::DescribeProcesses(left);
  }
  const int kept = ReadProgress(dir + "/cells").complete;

  ProcessResult again = RunInLauncher(run, kMatrixTimeout);
  ASSERT_EQ(again.exit_code, 0) << again;
  EXPECT_TRUE(Contains(again.stdout_text, "6 runs; " + std::to_string(kept) + " complete from before, " +
                                              std::to_string(6 - kept) + " to make"))
      << again;

  // Every run's hvdrun got the experiment's hvdrun options, and experiment.json records them.
  const nlohmann::json recorded = lab_test::ReadJson(dir + "/experiment.json");
  EXPECT_EQ(recorded["hvdrun_options"]["ssh_identity_file"], c().user_key()) << recorded.dump(2);
  EXPECT_EQ(recorded["hvdrun_options"]["network_interface"], std::vector<std::string>{"data0"});
  for (const nlohmann::json& cell : recorded["cells"]) {
    const nlohmann::json command =
        lab_test::ReadJson(dir + "/cells/" + cell["id"].get<std::string>() + "/repeat-1/run.json")["command"];
    const std::vector<std::string> words = command.get<std::vector<std::string>>();
    for (const std::string& word : {std::string("--ssh-known-hosts"), c().known_hosts(),
                                    std::string("--network-interface"), std::string("data0")}) {
      EXPECT_NE(std::find(words.begin(), words.end(), word), words.end()) << word << " in " << command.dump();
    }
  }

  ProcessResult report =
      RunInLauncher({StagedProgram("hvdrun-lab"), "report", results}, milliseconds(60'000));
  ASSERT_EQ(report.exit_code, 0) << report;
  const nlohmann::json json = lab_test::ReadJson(dir + "/report.json");

  // The inter-node table: Gloo and MPI on 1, 2 and 4 servers, one process of one thread each.
  ASSERT_EQ(json["speedup"].size(), 6u) << json["speedup"].dump(2);
  std::map<std::string, const nlohmann::json*> by_cell;
  for (const nlohmann::json& row : json["speedup"]) {
    by_cell[row["cell"].get<std::string>()] = &row;
    EXPECT_EQ(row["processes_per_server"], 1) << row.dump();
    EXPECT_EQ(row["workers"], row["servers"]) << row.dump();
    EXPECT_EQ(row["threads_per_process"], 1) << row.dump();
    EXPECT_EQ(row["cpus"], row["workers"]) << row.dump();
    EXPECT_EQ(row["runs_ok"], 1) << row.dump();
    if (row["workers"] != 1) {
      EXPECT_GT(row["speedup"].get<double>(), 0) << row.dump();
    }
  }
  for (const char* backend : {"gloo", "mpi"}) {
    for (int servers : {1, 2, 4}) {
      const std::string id = std::string("backend-") + backend + "_processes-per-server-1_servers-" +
                             std::to_string(servers) + "_model-resnet18_batch-size-2_threads-1_device-cpu";
      EXPECT_EQ(by_cell.count(id), 1u) << id;
    }
  }

  // The environment table names every server, and its facts come from each of them.
  bool servers_row = false;
  bool os_from_every_server = false;
  for (const nlohmann::json& row : json["environment"]) {
    const std::string value = row["value"].get<std::string>();
    const std::string source = row["source"].get<std::string>();
    if (row["item"] == "Servers") {
      servers_row = Contains(value, "server1, server2, server3, server4");
      EXPECT_TRUE(servers_row) << row.dump();
    }
    if (row["item"] == "OS") {
      os_from_every_server = Contains(source, "server1") && Contains(source, "server4");
      EXPECT_TRUE(os_from_every_server) << row.dump();
    }
  }
  EXPECT_TRUE(servers_row) << json["environment"].dump(2);
  EXPECT_TRUE(os_from_every_server) << json["environment"].dump(2);

  // The breakdown: every cell, each figure the mean over its ranks' reports.
  ASSERT_EQ(json["breakdown"].size(), 1u) << json["breakdown"].dump(2);
  const nlohmann::json& table = json["breakdown"][0];
  ASSERT_EQ(table["rows"].size(), 6u) << table.dump(2);
  for (const nlohmann::json& row : table["rows"]) {
    const std::string cell = row["cell"].get<std::string>();
    const int n = row["workers"].get<int>();
    double compute = 0, wait = 0, overlapped = 0, bytes = 0;
    for (int rank = 0; rank < n; ++rank) {
      const nlohmann::json rank_report = lab_test::ReadJson(
          dir + "/cells/" + cell + "/repeat-1/hvdrun/ranks/rank-" + std::to_string(rank) + ".json");
      const nlohmann::json& summary = rank_report["summary"];
      ASSERT_TRUE(summary.is_object()) << cell << " rank " << rank;
      compute += summary["compute_time_s"].get<double>();
      wait += summary["comm_wait_s"].get<double>();
      overlapped += summary["comm_overlapped_s"].get<double>();
      bytes += summary["bytes_reduced_per_step"].get<double>();
      EXPECT_NEAR(summary["compute_time_s"].get<double>() + summary["comm_wait_s"].get<double>(),
                  summary["step_time_s"].get<double>(), 1e-9)
          << cell;
    }
    EXPECT_NEAR(row["compute_s"]["mean"].get<double>(), compute / n, 1e-9) << cell;
    EXPECT_NEAR(row["comm_wait_s"]["mean"].get<double>(), wait / n, 1e-9) << cell;
    EXPECT_NEAR(row["comm_overlapped_s"]["mean"].get<double>(), overlapped / n, 1e-9) << cell;
    EXPECT_NEAR(row["bytes_per_step"]["mean"].get<double>(), bytes / n, 1e-3) << cell;
    if (n == 1) {
      EXPECT_TRUE(row["busbw_gbps"].is_null()) << cell;
      continue;
    }
    EXPECT_GT(bytes / n, 4e7) << cell << ": ResNet-18's gradients are about 46 MB";
    const double algbw = bytes / n / ((overlapped + wait) / n) / 1e9;
    EXPECT_NEAR(row["algbw_gbps"]["mean"].get<double>(), algbw, algbw * 1e-9) << cell;
    EXPECT_NEAR(row["busbw_gbps"]["mean"].get<double>(), algbw * 2 * (n - 1) / n, algbw * 1e-9) << cell;
  }
  const std::string explanation = table["explanation"].get<std::string>();
  EXPECT_EQ(explanation.rfind("Largest loss of efficiency: ", 0), 0u) << explanation;
  EXPECT_TRUE(Contains(explanation, " on 2 processes (2 servers, 1 thread each)") ||
              Contains(explanation, " on 4 processes (4 servers, 1 thread each)"))
      << explanation;
  const std::string md = e2e::ReadFileBytes(dir + "/report.md");
  EXPECT_TRUE(Contains(md, "## Where a step's time goes")) << md;
  EXPECT_TRUE(Contains(md, "hvdrun options of every run: ")) << md;
  EXPECT_TRUE(Contains(md, "network_interface=data0")) << md;
  EXPECT_TRUE(fs::exists(dir + "/breakdown.svg"));
}

}  // namespace
}  // namespace hvdrun::cluster
