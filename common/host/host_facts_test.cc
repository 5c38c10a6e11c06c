#include "common/host/host_facts.h"

#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <iterator>

namespace hvdrun {
namespace {

TEST(HostFacts, DescribesANicWithItsAddressesSpeedAndDriver) {
  EXPECT_EQ(DescribeNic("eth0", {"10.0.0.1/24", "fe80::1/64"}, "10000", "mlx5_core"),
            "eth0 10.0.0.1/24 fe80::1/64, 10000 Mb/s, mlx5_core");
  // A veth reports -1 (or cannot be read) when it has no speed.
  EXPECT_EQ(DescribeNic("eth0", {"10.77.0.11/24"}, "-1", "virtual"),
            "eth0 10.77.0.11/24, speed unknown, virtual");
  EXPECT_EQ(DescribeNic("ib0", {}, "", "ib_ipoib"), "ib0 (no address), speed unknown, ib_ipoib");
}

TEST(HostFacts, DefineValue) {
  const std::string header =
      "#ifndef X\n#define NCCL_MAJOR 2\n#  define NCCL_MINOR 28 // minor\n#define CUDA_VERSION 12040\n";
  EXPECT_EQ(DefineValue(header, "NCCL_MAJOR"), "2");
  EXPECT_EQ(DefineValue(header, "NCCL_MINOR"), "28");
  EXPECT_EQ(DefineValue(header, "CUDA_VERSION"), "12040");
  EXPECT_EQ(DefineValue(header, "NCCL_PATCH"), "");
  EXPECT_EQ(DefineValue(header, "NCCL"), "");
}

TEST(HostFacts, CountedList) {
  EXPECT_EQ(CountedList({"H100", "H100", "A100", "H100"}), "3 × H100, 1 × A100");
  EXPECT_EQ(CountedList({}), "");
}

TEST(HostFacts, EveryKeyIsPresentInOrderAndTheKernelIsThisMachines) {
  std::vector<protocol::HostFact> facts = ProbeHostFacts();
  ASSERT_EQ(facts.size(), std::size(kHostFactKeys));
  for (size_t i = 0; i < facts.size(); ++i) {
    EXPECT_EQ(facts[i].key, kHostFactKeys[i]);
    EXPECT_FALSE(facts[i].value.empty()) << facts[i].key;
    EXPECT_FALSE(facts[i].source.empty()) << facts[i].key;
  }
  utsname name{};
  ASSERT_EQ(::uname(&name), 0);
  EXPECT_EQ(facts[2].value, std::string(name.sysname) + " " + name.release + " " + name.machine);
  EXPECT_EQ(facts[1].source, "/etc/os-release");
}

TEST(HostFacts, MissingGpusSayNotFoundEverywhere) {
  std::vector<protocol::HostFact> facts = ProbeHostFacts();
  auto value = [&](const std::string& key) {
    for (const protocol::HostFact& fact : facts) {
      if (fact.key == key) return fact.value;
    }
    return std::string("absent");
  };
  if (value("gpu_count") != "0") GTEST_SKIP() << "this machine has GPUs: " << value("gpus");
  EXPECT_EQ(value("gpus"), kFactNotFound);
  EXPECT_EQ(value("gpu_connection"), kFactNotFound);
  EXPECT_EQ(value("gpu_driver"), kFactNotFound);
}

}  // namespace
}  // namespace hvdrun
