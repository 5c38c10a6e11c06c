#include "agent/host_probe.h"

#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <iterator>

namespace hvdrun {
namespace {

using std::chrono::milliseconds;

TEST(HostProbe, DescribesANicWithItsAddressesSpeedAndDriver) {
  EXPECT_EQ(DescribeNic("eth0", {"10.0.0.1/24", "fe80::1/64"}, "10000", "mlx5_core"),
            "eth0 10.0.0.1/24 fe80::1/64, 10000 Mb/s, mlx5_core");
  // A veth reports -1 (or cannot be read) when it has no speed.
  EXPECT_EQ(DescribeNic("eth0", {"10.77.0.11/24"}, "-1", "virtual"),
            "eth0 10.77.0.11/24, speed unknown, virtual");
  EXPECT_EQ(DescribeNic("ib0", {}, "", "ib_ipoib"), "ib0 (no address), speed unknown, ib_ipoib");
}

TEST(HostProbe, CapturesACommandsOutput) {
  StatusOr<std::string> output = CaptureCommand({"echo", "hello"}, milliseconds(5000));
  ASSERT_TRUE(output.ok()) << output.status().message();
  EXPECT_EQ(output.value(), "hello\n");
}

TEST(HostProbe, NamesAMissingCommandAFailureAndATimeout) {
  StatusOr<std::string> missing = CaptureCommand({"hvdrun-no-such-program"}, milliseconds(5000));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message().rfind("hvdrun-no-such-program not found", 0), 0u)
      << missing.status().message();
  StatusOr<std::string> failed = CaptureCommand({"false"}, milliseconds(5000));
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("false failed"), std::string::npos) << failed.status().message();
  auto start = std::chrono::steady_clock::now();
  StatusOr<std::string> slow = CaptureCommand({"sleep", "10"}, milliseconds(200));
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.status().message(), "sleep did not finish within 200 ms");
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000));
}

TEST(HostProbe, EveryKeyIsPresentInOrderAndTheKernelIsThisMachines) {
  std::vector<protocol::HostFact> facts = ProbeHostFacts();
  ASSERT_EQ(facts.size(), std::size(kHostFactKeys));
  for (size_t i = 0; i < facts.size(); ++i) {
    EXPECT_EQ(facts[i].key, kHostFactKeys[i]);
    EXPECT_FALSE(facts[i].value.empty()) << facts[i].key;
  }
  utsname name{};
  ASSERT_EQ(::uname(&name), 0);
  EXPECT_EQ(facts[2].value, std::string(name.sysname) + " " + name.release + " " + name.machine);
}

}  // namespace
}  // namespace hvdrun
