#include "common/host/network_interfaces.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace hvdrun {
namespace {

const std::vector<InterfaceAddress> kServer2 = {
    {"lo", "127.0.0.1"}, {"eth0", "10.0.0.2"}, {"ib0", "192.168.5.2"}};

TEST(NetworkInterfaces, TheFirstNamedInterfaceTheHostHasGivesItsAddress) {
  EXPECT_EQ(ChooseHostNetwork(kServer2, {"eth0"}, "10.0.0.2", "server2").value(),
            (HostNetwork{"10.0.0.2", "eth0"}));
  // The named interface wins over the address the job reached the host by.
  EXPECT_EQ(ChooseHostNetwork(kServer2, {"ib0", "eth0"}, "10.0.0.2", "server2").value(),
            (HostNetwork{"192.168.5.2", "ib0"}));
  // A name the host lacks is passed over: hosts may name their NICs differently.
  EXPECT_EQ(ChooseHostNetwork(kServer2, {"enp1s0", "eth0"}, "", "server2").value(),
            (HostNetwork{"10.0.0.2", "eth0"}));
}

TEST(NetworkInterfaces, WithoutNamesTheAddressTheJobReachedTheHostByIsOnTheInterfaceHoldingIt) {
  EXPECT_EQ(ChooseHostNetwork(kServer2, {}, "192.168.5.2", "server2").value(),
            (HostNetwork{"192.168.5.2", "ib0"}));
  // An address no interface holds (behind NAT, or interfaces unknown) keeps no interface name.
  EXPECT_EQ(ChooseHostNetwork(kServer2, {}, "203.0.113.9", "server2").value(),
            (HostNetwork{"203.0.113.9", ""}));
  EXPECT_EQ(ChooseHostNetwork({}, {}, "10.0.0.2", "server2").value(), (HostNetwork{"10.0.0.2", ""}));
}

TEST(NetworkInterfaces, AHostWithoutAnyNamedInterfaceIsAnErrorListingWhatItHas) {
  StatusOr<HostNetwork> chosen = ChooseHostNetwork(kServer2, {"enp1s0", "bond0"}, "10.0.0.2", "server2");
  ASSERT_FALSE(chosen.ok());
  EXPECT_EQ(chosen.status().message(),
            "host server2: no network interface named enp1s0 or bond0 with an IPv4 address (it has lo "
            "127.0.0.1, eth0 10.0.0.2, ib0 192.168.5.2)");
  chosen = ChooseHostNetwork({}, {"eth0"}, "", "server3");
  ASSERT_FALSE(chosen.ok());
  EXPECT_EQ(chosen.status().message(),
            "host server3: no network interface named eth0 with an IPv4 address (it has none)");
}

TEST(NetworkInterfaces, NamesAreCheckedAsTheKernelWouldTakeThem) {
  for (const char* good : {"lo", "eth0", "enp1s0f1", "ib0.8001", "veth-server1-a"}) {
    EXPECT_TRUE(IsValidInterfaceName(good)) << good;
  }
  for (const char* bad : {"", "eth0,eth1", "a/b", "eth0:1", "has space", "sixteen-chars-xx"}) {
    EXPECT_FALSE(IsValidInterfaceName(bad)) << bad;
  }
}

TEST(NetworkInterfaces, ThisMachineHasLoopback) {
  std::vector<InterfaceAddress> here = ListInterfaceAddresses();
  EXPECT_NE(std::find(here.begin(), here.end(), InterfaceAddress{"lo", "127.0.0.1"}), here.end());
}

TEST(NetworkInterfaces, NamesJoinWithCommas) {
  EXPECT_EQ(JoinInterfaceNames({"eth0"}), "eth0");
  EXPECT_EQ(JoinInterfaceNames({"eth0", "ib0"}), "eth0,ib0");
}

}  // namespace
}  // namespace hvdrun
