#include "common/placement/rank_environment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace hvdrun {
namespace {

std::map<std::string, std::string> AsMap(const std::vector<std::string>& env) {
  std::map<std::string, std::string> map;
  for (const std::string& entry : env) {
    size_t equals = entry.find('=');
    EXPECT_NE(equals, std::string::npos) << entry;
    EXPECT_FALSE(map.contains(entry.substr(0, equals))) << "set twice: " << entry;
    map[entry.substr(0, equals)] = entry.substr(equals + 1);
  }
  return map;
}

TEST(RankEnvironment, EveryNameForARankOnTheSecondHost) {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign({{"server1", 4}, {"server2", 4}}, 8);
  ASSERT_TRUE(assignment.ok());
  JobEnvironment job;
  job.job_id = "abc123";
  job.master_addr = "server1";
  job.master_port = 29500;
  std::map<std::string, std::string> env = AsMap(BuildRankEnvironment(assignment.value(), 6, job));
  std::map<std::string, std::string> expected = {
      {"HVDRUN_RANK", "6"},
      {"HVDRUN_SIZE", "8"},
      {"HVDRUN_LOCAL_RANK", "2"},
      {"HVDRUN_LOCAL_SIZE", "4"},
      {"HVDRUN_CROSS_RANK", "1"},
      {"HVDRUN_CROSS_SIZE", "2"},
      {"HVDRUN_HOSTNAME", "server2"},
      {"HVDRUN_JOB_ID", "abc123"},
      {"HOROVOD_RANK", "6"},
      {"HOROVOD_SIZE", "8"},
      {"HOROVOD_LOCAL_RANK", "2"},
      {"HOROVOD_LOCAL_SIZE", "4"},
      {"HOROVOD_CROSS_RANK", "1"},
      {"HOROVOD_CROSS_SIZE", "2"},
      {"HOROVOD_HOSTNAME", "server2"},
      {"RANK", "6"},
      {"WORLD_SIZE", "8"},
      {"LOCAL_RANK", "2"},
      {"LOCAL_WORLD_SIZE", "4"},
      {"GROUP_RANK", "1"},
      {"GROUP_WORLD_SIZE", "2"},
      {"MASTER_ADDR", "server1"},
      {"MASTER_PORT", "29500"},
      {"HVDRUN_HOST_ADDR", "server2"},
  };
  EXPECT_EQ(env, expected);
}

TEST(RankEnvironment, BackendJobsGetTheRendezvousServiceAndSecret) {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign({{"localhost", 2}}, 2);
  ASSERT_TRUE(assignment.ok());
  JobEnvironment job;
  job.job_id = "j";
  job.master_addr = "127.0.0.1";
  job.backend = "gloo";
  job.rendezvous_addr = "127.0.0.1";
  job.rendezvous_port = 4567;
  job.secret = std::string(64, 'a');
  std::map<std::string, std::string> env = AsMap(BuildRankEnvironment(assignment.value(), 1, job));
  EXPECT_EQ(env["HVDRUN_BACKEND"], "gloo");
  EXPECT_EQ(env["HVDRUN_RENDEZVOUS_ADDR"], "127.0.0.1");
  EXPECT_EQ(env["HVDRUN_RENDEZVOUS_PORT"], "4567");
  EXPECT_EQ(env["HVDRUN_SECRET"], std::string(64, 'a'));
  EXPECT_EQ(env["HVDRUN_HOST_ADDR"], "127.0.0.1");
}

TEST(RankEnvironment, NetworkInterfacesReachHvdrunNcclAndGloo) {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign({{"localhost", 1}}, 1);
  ASSERT_TRUE(assignment.ok());
  JobEnvironment job;
  std::map<std::string, std::string> env = AsMap(BuildRankEnvironment(assignment.value(), 0, job));
  EXPECT_FALSE(env.contains("HVDRUN_NETWORK_INTERFACES"));
  EXPECT_FALSE(env.contains("NCCL_SOCKET_IFNAME"));
  job.network_interfaces = {"ib0", "eth0"};
  env = AsMap(BuildRankEnvironment(assignment.value(), 0, job));
  EXPECT_EQ(env["HVDRUN_NETWORK_INTERFACES"], "ib0,eth0");
  EXPECT_EQ(env["NCCL_SOCKET_IFNAME"], "ib0,eth0");
  EXPECT_EQ(env["GLOO_SOCKET_IFNAME"], "ib0,eth0");
}

TEST(RankEnvironment, EachHostsNetworkGivesItsAddressAndOnSeveralHostsItsInterface) {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign({{"server1", 1}, {"server2", 1}}, 2);
  ASSERT_TRUE(assignment.ok());
  JobEnvironment job;
  job.host_networks = {{"10.0.0.1", "eth0"}, {"10.0.0.2", "enp1s0"}};
  std::map<std::string, std::string> env = AsMap(BuildRankEnvironment(assignment.value(), 1, job));
  EXPECT_EQ(env["HVDRUN_HOST_ADDR"], "10.0.0.2");
  EXPECT_EQ(env["GLOO_SOCKET_IFNAME"], "enp1s0");
  EXPECT_EQ(env["NCCL_SOCKET_IFNAME"], "enp1s0");
  EXPECT_FALSE(env.contains("HVDRUN_NETWORK_INTERFACES"));

  // What the user set in hvdrun's environment is left alone.
  job.user_variables = {"GLOO_SOCKET_IFNAME"};
  env = AsMap(BuildRankEnvironment(assignment.value(), 1, job));
  EXPECT_FALSE(env.contains("GLOO_SOCKET_IFNAME"));
  EXPECT_EQ(env["NCCL_SOCKET_IFNAME"], "enp1s0");

  // A host whose address no interface holds gets no interface name; one without a network entry
  // gets its name's address.
  job.host_networks = {{"10.0.0.1", "eth0"}, {"203.0.113.9", ""}};
  env = AsMap(BuildRankEnvironment(assignment.value(), 1, job));
  EXPECT_EQ(env["HVDRUN_HOST_ADDR"], "203.0.113.9");
  EXPECT_FALSE(env.contains("NCCL_SOCKET_IFNAME"));
  job.host_networks.clear();
  EXPECT_EQ(AsMap(BuildRankEnvironment(assignment.value(), 1, job))["HVDRUN_HOST_ADDR"], "server2");
}

TEST(RankEnvironment, OnOneHostTheInterfaceIsNotNamed) {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign({{"localhost", 2}}, 2);
  ASSERT_TRUE(assignment.ok());
  JobEnvironment job;
  job.host_networks = {{"127.0.0.1", "lo"}};
  std::map<std::string, std::string> env = AsMap(BuildRankEnvironment(assignment.value(), 1, job));
  EXPECT_EQ(env["HVDRUN_HOST_ADDR"], "127.0.0.1");
  EXPECT_FALSE(env.contains("GLOO_SOCKET_IFNAME"));
}

TEST(RankEnvironment, SetEnvironmentValueReplacesOrAppends) {
  std::vector<std::string> env = {"A=1", "AB=2"};
  SetEnvironmentValue(env, "A", "3");
  SetEnvironmentValue(env, "C", "");
  EXPECT_EQ(env, (std::vector<std::string>{"A=3", "AB=2", "C="}));
}

TEST(RankEnvironment, UserExportsComeLastSoTheyWin) {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign({{"localhost", 1}}, 1);
  ASSERT_TRUE(assignment.ok());
  JobEnvironment job;
  job.job_id = "id";
  job.master_addr = "127.0.0.1";
  job.master_port = 1234;
  job.exports = {"OMP_NUM_THREADS=2", "MASTER_PORT=4000"};
  std::vector<std::string> env = BuildRankEnvironment(assignment.value(), 0, job);
  ASSERT_GE(env.size(), 2u);
  EXPECT_EQ(env[env.size() - 2], "OMP_NUM_THREADS=2");
  EXPECT_EQ(env.back(), "MASTER_PORT=4000");
}

TEST(RankEnvironment, InsideASlurmAllocationRanksGetTheirPlaceUnderSlurmsNames) {
  StatusOr<RankAssignment> assignment =
      RankAssignment::Assign({{"n1", 2}, {"n2", 2}, {"n3", 2}, {"n4", 1}}, 7);
  ASSERT_TRUE(assignment.ok());
  JobEnvironment job;
  job.job_id = "abc123";
  std::vector<std::string> plain = BuildRankEnvironment(assignment.value(), 3, job);
  EXPECT_FALSE(AsMap(plain).contains("SLURM_PROCID"));

  job.slurm = true;
  job.slurm_job_name = "lab7";
  std::vector<std::string> env = BuildRankEnvironment(assignment.value(), 3, job);
  // SLURM_TASK_PID, the agent's, is named bare: removed from what the rank inherits.
  auto bare = std::find(env.begin(), env.end(), "SLURM_TASK_PID");
  ASSERT_NE(bare, env.end());
  env.erase(bare);
  std::map<std::string, std::string> slurm;
  for (const auto& [name, value] : AsMap(env)) {
    if (name.rfind("SLURM_", 0) == 0) slurm[name] = value;
  }
  EXPECT_EQ(slurm, (std::map<std::string, std::string>{{"SLURM_PROCID", "3"},
                                                       {"SLURM_LOCALID", "1"},
                                                       {"SLURM_NODEID", "1"},
                                                       {"SLURM_GTIDS", "2,3"},
                                                       {"SLURM_NTASKS", "7"},
                                                       {"SLURM_NPROCS", "7"},
                                                       {"SLURM_STEP_NUM_TASKS", "7"},
                                                       {"SLURM_NNODES", "4"},
                                                       {"SLURM_STEP_NUM_NODES", "4"},
                                                       {"SLURM_TASKS_PER_NODE", "2(x3),1"},
                                                       {"SLURM_STEP_TASKS_PER_NODE", "2(x3),1"},
                                                       {"SLURM_STEP_NODELIST", "n1,n2,n3,n4"},
                                                       {"SLURM_JOB_NAME", "lab7"}}));
  // A user's -x still wins.
  job.exports = {"SLURM_PROCID=99"};
  env = BuildRankEnvironment(assignment.value(), 3, job);
  EXPECT_EQ(env.back(), "SLURM_PROCID=99");
}

}  // namespace
}  // namespace hvdrun
