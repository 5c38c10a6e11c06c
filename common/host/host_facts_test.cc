#include "common/host/host_facts.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/utsname.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

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

// A bundle's folder, as far as the probe looks: share/hvdrun/bundle.env and lib/.
class BundleFacts : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "hvdrun-bundle-facts-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    bundle_ = pattern;
    std::filesystem::create_directories(bundle_ + "/share/hvdrun");
    std::filesystem::create_directories(bundle_ + "/lib");
  }
  void TearDown() override {
    ::unsetenv("HVDRUN_FAKE_NCCL_VERSION_CODE");
    std::filesystem::remove_all(bundle_);
  }
  void WriteEnv(const std::string& text) const {
    std::ofstream(bundle_ + "/share/hvdrun/bundle.env") << text;
  }

  std::string bundle_;
};

TEST_F(BundleFacts, GlooIsTheBundlesOwnWhereItSaysWhich) {
  WriteEnv(
      "# Written by "
      "build-bundle.sh\nHVDRUN_BUNDLE_VERSION=\"0.2.0\"\nHVDRUN_BUNDLE_GLOO=\"0.0~git20230519.597accf-2\"\n");
  const protocol::HostFact fact = ProbeGloo(bundle_);
  EXPECT_EQ(fact.value, "Gloo 0.0~git20230519.597accf-2 (the bundle's own)");
  EXPECT_EQ(fact.source, bundle_ + "/share/hvdrun/bundle.env");
}

TEST_F(BundleFacts, ABundleThatDoesNotSayFallsBackToThePackages) {
  WriteEnv("HVDRUN_BUNDLE_VERSION=\"0.2.0\"\n");
  const protocol::HostFact fact = ProbeGloo(bundle_);
  EXPECT_EQ(fact.source.find(bundle_), std::string::npos) << fact.source;
  EXPECT_TRUE(fact.source.rfind("dpkg-query", 0) == 0 || fact.value == kFactNotFound) << fact.source;
}

TEST_F(BundleFacts, NcclIsWhatTheBundlesLibrarySaysOfItself) {
  std::filesystem::create_symlink(HVDRUN_FAKE_NCCL, bundle_ + "/lib/libnccl.so.2");
  protocol::HostFact fact = ProbeNccl(bundle_);
  EXPECT_EQ(fact.value, "NCCL 2.28.9");
  EXPECT_EQ(fact.source, std::filesystem::canonical(HVDRUN_FAKE_NCCL).string() + " (ncclGetVersion)");
  // Before 2.9, NCCL_VERSION(X, Y, Z) was X * 1000 + Y * 100 + Z.
  ASSERT_EQ(::setenv("HVDRUN_FAKE_NCCL_VERSION_CODE", "2803", 1), 0);
  EXPECT_EQ(ProbeNccl(bundle_).value, "NCCL 2.8.3");
}

TEST_F(BundleFacts, ALibncclThatIsNoLibraryIsPassedOver) {
  std::ofstream(bundle_ + "/lib/libnccl.so.2") << "not a library\n";
  const protocol::HostFact fact = ProbeNccl(bundle_);
  EXPECT_EQ(fact.source.find(bundle_), std::string::npos) << fact.source;
  EXPECT_FALSE(fact.value.empty());
}

}  // namespace
}  // namespace hvdrun
