#include "lab/host_facts.h"

#include <gtest/gtest.h>

#include "common/host/host_facts.h"

namespace hvdrun::lab {
namespace {

TEST(LabHostFacts, NicModelsCountPhysicalInterfacesByDriverAndSpeed) {
  EXPECT_EQ(
      NicModels("eth0 10.0.0.1/24 fe80::1/64, 100000 Mb/s, mlx5_core; eth1 (no address), 100000 Mb/s, "
                "mlx5_core; eno1 192.168.1.5/24, 1000 Mb/s, e1000e; br0 10.1.0.1/16, speed unknown, bridge; "
                "veth3 (no address), 10000 Mb/s, virtual; ib0 (no address), speed unknown, ib_ipoib"),
      "2 × mlx5_core (100000 Mb/s), 1 × e1000e (1000 Mb/s), 1 × ib_ipoib");
  EXPECT_EQ(NicModels("data0 10.78.0.11/24, 10000 Mb/s, virtual; eth0 10.77.0.11/24, 10000 Mb/s, virtual"),
            "none (2 virtual interfaces)");
  EXPECT_EQ(NicModels("ifb0 (no address), speed unknown, virtual"), "none (1 virtual interface)");
  // What is not hvdrun's list (an older hvdrun-lab's own probe, "not found") stays as it is.
  EXPECT_EQ(NicModels("not found"), "not found");
  EXPECT_EQ(NicModels("1 × virtio_net (PCI 1af4:1041)"), "1 × virtio_net (PCI 1af4:1041)");
  EXPECT_EQ(NicModels("2 × mlx5_core, 1 × e1000e"), "2 × mlx5_core, 1 × e1000e");
}

TEST(LabHostFacts, JsonRoundTripAndPlainStrings) {
  HostFacts host;
  host.host = "server1";
  host.gpu_count = 4;
  host.facts["os"] = {"Debian GNU/Linux 12 (bookworm)", "/etc/os-release"};
  StatusOr<HostFacts> back = HostFactsFromJson(ToJson(host), "environment.json");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->host, "server1");
  EXPECT_EQ(back->gpu_count, 4);
  EXPECT_EQ(back->facts["os"].value, "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(back->facts["os"].source, "/etc/os-release, environment.json");

  // A flatter file: facts as strings at the top level; unknown keys ignored.
  StatusOr<HostFacts> flat = HostFactsFromJson(
      nlohmann::json::parse(R"({"host": "s2", "gpus": "8 × H100", "nccl": "NCCL 2.21.5", "other": 1})"),
      "hosts/s2.json");
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(flat->facts.size(), 2u);
  EXPECT_EQ(flat->facts["gpus"].value, "8 × H100");
  EXPECT_EQ(flat->facts["gpus"].source, "hosts/s2.json");
  EXPECT_FALSE(HostFactsFromJson(nlohmann::json::array(), "x").ok());
}

TEST(LabHostFacts, AreTheProbesFactsByKey) {
  HostFacts host = HostFactsOf({{"hostname", "server1", "gethostname"},
                                {"gpus", "2 × NVIDIA H100", "nvidia-smi"},
                                {"gpu_count", "2", "nvidia-smi"}});
  EXPECT_EQ(host.host, "server1");
  EXPECT_EQ(host.gpu_count, 2);
  EXPECT_EQ(host.facts["gpus"].value, "2 × NVIDIA H100");
  EXPECT_EQ(host.facts["gpus"].source, "nvidia-smi");
  EXPECT_EQ(HostFactsOf({{"hostname", kFactNotFound, "gethostname failed"}}).host, "localhost");
}

TEST(LabHostFacts, ProbesThisMachine) {
  HostFacts host = ProbeLocalHost();
  EXPECT_FALSE(host.host.empty());
  for (const char* key : kHostFactKeys) {
    ASSERT_EQ(host.facts.count(key), 1u) << key;
    EXPECT_FALSE(host.facts[key].value.empty()) << key;
    EXPECT_FALSE(host.facts[key].source.empty()) << key;
  }
  EXPECT_EQ(host.facts["os"].source, "/etc/os-release");
  EXPECT_EQ(host.facts["kernel"].value.rfind("Linux ", 0), 0u) << host.facts["kernel"].value;
  EXPECT_EQ(std::to_string(host.gpu_count), host.facts["gpu_count"].value);
  MachineFacts machine = MachineFactsOf(host);
  EXPECT_EQ(machine.gpus, host.gpu_count);
  EXPECT_EQ(machine.gpus_source, host.facts["gpus"].source);
  // Its JSON form reads back as it was.
  StatusOr<HostFacts> back = HostFactsFromJson(ToJson(host), "environment.json");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->facts.size(), host.facts.size());
  EXPECT_EQ(back->gpu_count, host.gpu_count);
}

}  // namespace
}  // namespace hvdrun::lab
