#include "lab/report/environment_table.h"

#include <gtest/gtest.h>

namespace hvdrun::lab {
namespace {

const EnvironmentRow* Row(const std::vector<EnvironmentRow>& rows, const std::string& item) {
  for (const EnvironmentRow& row : rows) {
    if (row.item == item) return &row;
  }
  return nullptr;
}

HostFacts Facts(const std::string& host, const std::string& gpus, const std::string& source) {
  HostFacts facts;
  facts.host = host;
  facts.facts["gpus"] = {gpus, source};
  facts.facts["os"] = {"Debian 12", source};
  return facts;
}

ExperimentResults WithOneRun() {
  ExperimentResults results;
  StoredCell stored;
  stored.cell.id = "cell";
  stored.cell.servers = 2;
  StoredRun run;
  run.repeat = 1;
  run.record.ok = true;
  run.plan_hosts = {"server1", "server2"};
  stored.runs.push_back(run);
  results.cells.push_back(stored);
  return results;
}

TEST(EnvironmentTable, HostFactsOfTheRunsComeFirst) {
  ExperimentResults results = WithOneRun();
  StoredRun& run = results.cells[0].runs[0];
  run.host_facts = {{"/r/hvdrun/hosts/server1.json", Facts("server1", "4 × H100", "hosts/server1.json")},
                    {"/r/hvdrun/hosts/server2.json", Facts("server2", "4 × A100", "hosts/server2.json")}};
  HostFacts environment = Facts("lab-machine", "not found", "nvidia-smi");
  environment.facts["mpi"] = {"mpirun (Open MPI) 4.1.4", "mpirun --version, environment.json"};
  results.environment = environment;
  RankReport report;
  report.framework = "libtorch 1.13.1";
  run.ranks.push_back(report);
  bool probed = false;
  EnvironmentTable table = BuildEnvironmentTable(results, [&] {
    probed = true;
    return HostFacts{};
  });
  const std::vector<EnvironmentRow>& rows = table.rows;
  EXPECT_FALSE(probed);
  ASSERT_NE(Row(rows, "Servers"), nullptr);
  EXPECT_EQ(Row(rows, "Servers")->value, "up to 2 per cell (hosts: server1, server2)");
  EXPECT_EQ(Row(rows, "Servers")->source, "hvdrun's plan.json of 1 runs");
  // Hosts that differ are listed each with its value.
  EXPECT_EQ(Row(rows, "GPU model and count")->value, "4 × H100 (server1); 4 × A100 (server2)");
  EXPECT_EQ(Row(rows, "OS")->value, "Debian 12");
  EXPECT_EQ(Row(rows, "OS")->source, "hvdrun host facts: hosts/server1.json (server1, server2)");
  // What the hosts' files lack comes from environment.json.
  EXPECT_EQ(Row(rows, "MPI")->value, "mpirun (Open MPI) 4.1.4");
  EXPECT_EQ(Row(rows, "MPI")->source, "mpirun --version, environment.json");
  EXPECT_EQ(Row(rows, "Framework and version")->value, "libtorch 1.13.1");
  EXPECT_EQ(Row(rows, "Framework and version")->source, "rank 0's report in cells/cell/repeat-1");
  EXPECT_EQ(rows[0].item, "Servers");
  EXPECT_EQ(rows[1].item, "NIC model and count");
}

TEST(EnvironmentTable, HvdrunsInterfaceListsBecomeNicModelsAndCounts) {
  ExperimentResults results = WithOneRun();
  HostFacts server1 = Facts("server1", "not found", "nvidia-smi");
  server1.facts["nics"] = {
      "eth0 10.0.0.11/24, 25000 Mb/s, mlx5_core; eth1 (no address), 25000 Mb/s, mlx5_core; "
      "veth0 (no address), 10000 Mb/s, virtual",
      "/sys/class/net, getifaddrs"};
  HostFacts server2 = server1;
  server2.host = "server2";
  server2.facts["nics"].value =
      "eth0 10.0.0.12/24, 25000 Mb/s, mlx5_core; eth1 (no address), 25000 Mb/s, mlx5_core";
  results.cells[0].runs[0].host_facts = {{"/r/hosts/server1.json", server1},
                                         {"/r/hosts/server2.json", server2}};
  EnvironmentTable table = BuildEnvironmentTable(results, [] { return HostFacts{}; });
  ASSERT_NE(Row(table.rows, "NIC model and count"), nullptr);
  // Both hosts have the same NICs, though their addresses and virtual interfaces differ.
  EXPECT_EQ(Row(table.rows, "NIC model and count")->value, "2 × mlx5_core (25000 Mb/s)");
}

TEST(EnvironmentTable, EnvironmentJsonsInterfaceListsBecomeNicModelsToo) {
  ExperimentResults results = WithOneRun();
  HostFacts environment = Facts("lab-machine", "not found", "nvidia-smi");
  environment.facts["nics"] = {
      "eth0 10.0.0.5/24, 1000 Mb/s, e1000e; docker0 (no address), speed unknown, bridge",
      "/sys/class/net, getifaddrs"};
  results.environment = environment;
  EnvironmentTable table = BuildEnvironmentTable(results, [] { return HostFacts{}; });
  ASSERT_NE(Row(table.rows, "NIC model and count"), nullptr);
  EXPECT_EQ(Row(table.rows, "NIC model and count")->value, "1 × e1000e (1000 Mb/s)");
  EXPECT_EQ(Row(table.rows, "NIC model and count")->source, "/sys/class/net, getifaddrs");
}

TEST(EnvironmentTable, WithoutStoredFactsThisMachineIsReadAndSaidSo) {
  ExperimentResults results = WithOneRun();
  int probes = 0;
  EnvironmentTable table = BuildEnvironmentTable(results, [&] {
    ++probes;
    HostFacts facts = Facts("here", "not found", "nvidia-smi");
    return facts;
  });
  const std::vector<EnvironmentRow>& rows = table.rows;
  EXPECT_EQ(probes, 1);
  ASSERT_NE(Row(rows, "GPU model and count"), nullptr);
  EXPECT_EQ(Row(rows, "GPU model and count")->value, "not found");
  EXPECT_EQ(Row(rows, "GPU model and count")->source, "nvidia-smi, read now");
  EXPECT_EQ(Row(rows, "MPI")->value, "not recorded");
  EXPECT_EQ(
      table.note,
      "\"read now\": read by hvdrun-lab report on here, as the results hold neither host facts from the runs "
      "nor environment.json.");
}

TEST(EnvironmentTable, TheSlurmJobTheMatrixRanInIsARow) {
  ExperimentResults results = WithOneRun();
  EnvironmentTable table = BuildEnvironmentTable(results, [] { return HostFacts{}; });
  EXPECT_EQ(Row(table.rows, "Slurm job"), nullptr);
  results.slurm.job_id = "42";
  results.slurm.node_list = "server[1-2]";
  results.slurm.tasks_per_node = "2(x2)";
  table = BuildEnvironmentTable(results, [] { return HostFacts{}; });
  ASSERT_NE(Row(table.rows, "Slurm job"), nullptr);
  EXPECT_EQ(table.rows[1].item, "Slurm job");  // beside the servers
  EXPECT_EQ(
      Row(table.rows, "Slurm job")->value,
      "42 (nodes server[1-2], tasks per node 2(x2)); each cell on the first nodes it needs, through srun");
  EXPECT_EQ(Row(table.rows, "Slurm job")->source,
            "SLURM_JOB_ID, SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE, environment.json");
}

}  // namespace
}  // namespace hvdrun::lab
