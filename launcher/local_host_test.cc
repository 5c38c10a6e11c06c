#include "launcher/local_host.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace hvdrun {
namespace {

TEST(LocalHost, LoopbackNamesAndAddresses) {
  EXPECT_TRUE(IsLocalHost("localhost"));
  EXPECT_TRUE(IsLocalHost("127.0.0.1"));
  EXPECT_TRUE(IsLocalHost("127.1.2.3"));
  EXPECT_TRUE(IsLocalHost("::1"));
}

TEST(LocalHost, OwnHostName) {
  char name[256] = {};
  ASSERT_EQ(::gethostname(name, sizeof(name) - 1), 0);
  EXPECT_TRUE(IsLocalHost(name));
}

TEST(LocalHost, OtherHostsAreRemote) {
  EXPECT_FALSE(IsLocalHost("server1"));
  EXPECT_FALSE(IsLocalHost("192.0.2.10"));  // TEST-NET-1, never assigned to a real machine
  EXPECT_FALSE(IsLocalHost("2001:db8::1"));
  EXPECT_FALSE(IsLocalHost("128.0.0.1"));
}

}  // namespace
}  // namespace hvdrun
