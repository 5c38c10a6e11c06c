#include "launcher/elastic/host_blacklist.h"

#include <gtest/gtest.h>

namespace hvdrun {
namespace {

TEST(HostBlacklist, WithoutACooldownAFailedHostIsOutForGood) {
  double now = 0;
  HostBlacklist blacklist(
      std::nullopt, [&] { return now; }, [] { return 0.5; });
  EXPECT_FALSE(blacklist.Contains("a"));
  blacklist.Add("a");
  now = 1e9;
  EXPECT_TRUE(blacklist.Contains("a"));
  EXPECT_EQ(blacklist.SecondsLeft("a"), -1);
  std::vector<HostSlots> kept = blacklist.Filter({{"a", 2}, {"b", 1}});
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].host, "b");
}

TEST(HostBlacklist, TheCooldownDoublesWithEachFailureAndStaysInTheRange) {
  double now = 100;
  double jitter = 0.5;
  HostBlacklist blacklist(
      CooldownRange{10, 100}, [&] { return now; }, [&] { return jitter; });
  blacklist.Add("a");  // 10 * 2 + 5
  EXPECT_DOUBLE_EQ(blacklist.SecondsLeft("a"), 25);
  blacklist.Add("a");  // during the cooldown: neither counted nor extended
  EXPECT_DOUBLE_EQ(blacklist.SecondsLeft("a"), 25);
  now += 25;
  EXPECT_FALSE(blacklist.Contains("a"));
  blacklist.Add("a");  // 10 * 4 + 5
  EXPECT_DOUBLE_EQ(blacklist.SecondsLeft("a"), 45);
  now += 45;
  jitter = 0.9;
  blacklist.Add("a");  // 10 * 8 + 9 = 89
  EXPECT_DOUBLE_EQ(blacklist.SecondsLeft("a"), 89);
  now += 89;
  blacklist.Add("a");  // 10 * 16 + 9, clamped to 100
  EXPECT_DOUBLE_EQ(blacklist.SecondsLeft("a"), 100);
  now += 99;
  EXPECT_TRUE(blacklist.Contains("a"));
  now += 1;
  EXPECT_FALSE(blacklist.Contains("a"));
  EXPECT_FALSE(blacklist.Contains("b"));
}

TEST(HostBlacklist, TheLowerBoundHoldsWhenItEqualsTheUpper) {
  double now = 0;
  HostBlacklist blacklist(
      CooldownRange{5, 5}, [&] { return now; }, [] { return 0.0; });
  blacklist.Add("a");
  EXPECT_DOUBLE_EQ(blacklist.SecondsLeft("a"), 5);
}

}  // namespace
}  // namespace hvdrun
