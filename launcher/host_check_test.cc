#include "launcher/host_check.h"

#include <gtest/gtest.h>

#include "common/host/host_facts.h"

namespace hvdrun {
namespace {

HostCheckResult Answered(const std::string& host, const std::string& mpi) {
  HostCheckResult result;
  result.host = host;
  result.ssh = "ok (10.0.0.1)";
  result.hello = protocol::AgentHello{protocol::kProtocolVersion,
                                      "0.1.0",
                                      host,
                                      42,
                                      0,
                                      {{"kernel", "Linux 6.1.0 x86_64", "uname"},
                                       {"nics",
                                        "eth0 10.0.0.1/24, 10000 Mb/s, mlx5_core; eth1 (no address), "
                                        "speed unknown, virtual",
                                        "/sys/class/net"},
                                       {"gpu_count", "0", "nvidia-smi"},
                                       {"mpi", mpi, "mpirun --version"},
                                       {"hvdrun_agent", "hvdrun-agent 0.1.0", "built in"}}};
  return result;
}

TEST(HostCheck, TableHasARowPerFactAndPerNic) {
  EXPECT_EQ(FormatHostCheck(Answered("server1", "mpirun (Open MPI) 4.1.4")),
            "server1: ok\n"
            "  ssh          ok (10.0.0.1)\n"
            "  agent        hvdrun-agent 0.1.0 (protocol " +
                std::to_string(protocol::kProtocolVersion) +
                ", pid 42)\n"
                "  kernel       Linux 6.1.0 x86_64\n"
                "  nics         eth0 10.0.0.1/24, 10000 Mb/s, mlx5_core\n"
                "               eth1 (no address), speed unknown, virtual\n"
                "  mpi          mpirun (Open MPI) 4.1.4\n");
}

TEST(HostCheck, AFailedHostShowsItsError) {
  HostCheckResult result;
  result.host = "server3";
  result.error = "connect: 10.0.0.3 port 22: No route to host";
  EXPECT_EQ(FormatHostCheck(result),
            "server3: FAILED\n  error        connect: 10.0.0.3 port 22: No route to host\n");
}

TEST(HostCheck, VersionMismatchesNameEachValueAndItsHosts) {
  std::vector<HostCheckResult> same = {Answered("a", "mpirun (Open MPI) 4.1.4"),
                                       Answered("b", "mpirun (Open MPI) 4.1.4")};
  EXPECT_TRUE(VersionMismatches(same).empty());
  std::vector<HostCheckResult> differ = {Answered("a", "mpirun (Open MPI) 4.1.4"),
                                         Answered("b", "not installed"),
                                         Answered("c", "mpirun (Open MPI) 4.1.4")};
  // A failed host has no versions to compare.
  HostCheckResult failed;
  failed.host = "d";
  failed.error = "auth: refused";
  differ.push_back(failed);
  EXPECT_EQ(
      VersionMismatches(differ),
      (std::vector<std::string>{"mpi differs: 'mpirun (Open MPI) 4.1.4' on a, c; 'not installed' on b"}));
}

TEST(HostFactsFile, IsTheFormHvdrunLabReads) {
  nlohmann::json json = HostFactsToJson(
      "server1",
      {{"os", "Debian GNU/Linux 12 (bookworm)", "/etc/os-release"}, {"gpu_count", "2", "nvidia-smi"}});
  EXPECT_EQ(json["host"], "server1");
  EXPECT_EQ(json["gpu_count"], 2);
  EXPECT_EQ(json["facts"]["os"]["value"], "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(json["facts"]["os"]["source"], "/etc/os-release");
}

}  // namespace
}  // namespace hvdrun
