#include "runtime/autotune/bayesian_optimizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/autotune/setting_search.h"

namespace hvdrun {
namespace {

// A smooth hill over the autotuner's box, highest (1000) at 20 MiB and 30 ms, much like a job's
// throughput: falls off towards small buffers and long cycles.
double Hill(double fusion_mib, double cycle_ms) {
  const double df = (fusion_mib - 20) / 25;
  const double dc = (cycle_ms - 30) / 40;
  return 1000 * std::exp(-(df * df + dc * dc));
}

TEST(BayesianOptimizer, ProposesTheBoxsCentreBeforeAnyScore) {
  BayesianOptimizer optimizer({{0, 64}, {1, 100}}, 0.8);
  EXPECT_EQ(optimizer.Next(), (BayesianOptimizer::Point{32, 50.5}));
}

TEST(BayesianOptimizer, FindsTheTopOfAHillWithinTwentySamples) {
  SettingSearch search({128, 1}, false, false, 20, 0.8);
  while (!search.done()) {
    const TunedSetting setting = search.current();
    EXPECT_GE(setting.cycle_time_ms, 1);
    EXPECT_LE(setting.cycle_time_ms, 100);
    EXPECT_LE(setting.fusion_threshold_mib, 128);
    search.Scored(Hill(setting.fusion_threshold_mib, setting.cycle_time_ms));
  }
  EXPECT_EQ(search.samples(), 20);
  // Within 3% of the optimum, where the seeds alone reach 94% of it (16 MiB, 25 ms).
  EXPECT_GT(search.best_score(), 970)
      << search.best().fusion_threshold_mib << " MiB, " << search.best().cycle_time_ms << " ms";
  EXPECT_NEAR(search.start_score(), Hill(128, 1), 1e-9);
}

TEST(BayesianOptimizer, NoisyScoresStillEndNearTheTop) {
  // The same hill with +-5% deterministic noise: the search must not chase it.
  int calls = 0;
  SettingSearch search({128, 1}, false, false, 20, 0.8);
  while (!search.done()) {
    const TunedSetting setting = search.current();
    const double noise = 1 + 0.05 * std::sin(12.9898 * ++calls);
    search.Scored(Hill(setting.fusion_threshold_mib, setting.cycle_time_ms) * noise);
  }
  EXPECT_GT(Hill(search.best().fusion_threshold_mib, search.best().cycle_time_ms), 900);
}

TEST(BayesianOptimizer, OneDimensionWhenTheOtherIsFixed) {
  SettingSearch search({128, 7}, false, true, 12, 0.8);
  while (!search.done()) {
    EXPECT_EQ(search.current().cycle_time_ms, 7);
    search.Scored(Hill(search.current().fusion_threshold_mib, 30));
  }
  EXPECT_NEAR(search.best().fusion_threshold_mib, 20, 3);
}

TEST(BayesianOptimizer, TheStartingSettingIsKeptWhenNothingBeatsIt) {
  SettingSearch search({128, 1}, false, false, 6, 0.8);
  int samples = 0;
  while (!search.done()) search.Scored(samples++ == 0 ? 2000 : 100);
  EXPECT_EQ(search.best().fusion_threshold_mib, 128);
  EXPECT_EQ(search.best().cycle_time_ms, 1);
  EXPECT_EQ(search.current().fusion_threshold_mib, 128);
  EXPECT_EQ(search.best_score(), 2000);
}

// On a shared machine the noise drifts: here a quiet spell makes samples 6 and 7 (the search's
// first two proposals) score twice what they are worth. The setting is kept only if it beats the start
// in every pair when the two are measured alternately at the end (the last 6 of the 20 samples).
TEST(BayesianOptimizer, ALuckySpellDoesNotWinWithoutBeatingTheStartBesideIt) {
  SettingSearch search({128, 1}, false, false, 20, 0.8);
  std::vector<TunedSetting> measured;
  while (!search.done()) {
    const TunedSetting setting = search.current();
    measured.push_back(setting);
    const int sample = static_cast<int>(measured.size());
    // The start is worth 1000, everything else 800, but for the spell.
    double score = setting.fusion_threshold_mib == 128 ? 1000 : 800;
    if (sample == 6 || sample == 7) score *= 2;
    search.Scored(score);
  }
  ASSERT_EQ(measured.size(), 20U);
  // The confirmation: the challenger (the lucky setting, best on average) and the start, alternately.
  for (size_t i = 14; i < 20; ++i) {
    const TunedSetting expected = i % 2 == 0 ? measured[5] : TunedSetting{128, 1};
    EXPECT_EQ(measured[i].fusion_threshold_mib, expected.fusion_threshold_mib) << i;
    EXPECT_EQ(measured[i].cycle_time_ms, expected.cycle_time_ms) << i;
  }
  EXPECT_EQ(search.best().fusion_threshold_mib, 128);
  EXPECT_EQ(search.best().cycle_time_ms, 1);
  EXPECT_EQ(search.best_score(), 1000);
  EXPECT_EQ(search.start_score(), 1000);
}

// A challenger that wins two pairs of three, by much, is not kept: the start is.
TEST(BayesianOptimizer, TheChallengerMustWinEveryPair) {
  for (const bool loses_one : {false, true}) {
    SettingSearch search({128, 1}, false, false, 20, 0.8);
    int sample = 0;
    while (!search.done()) {
      const bool start = search.current().fusion_threshold_mib == 128;
      ++sample;
      double score = start ? 1000 : 1200;
      if (loses_one && sample == 19) score = 900;  // the challenger's last confirmation sample
      search.Scored(score);
    }
    EXPECT_EQ(search.best().fusion_threshold_mib == 128, loses_one);
    EXPECT_EQ(search.start_score(), 1000);
  }
}

TEST(BayesianOptimizer, SameScoresGiveTheSameProposals) {
  BayesianOptimizer a({{0, 64}, {1, 100}}, 0.8);
  BayesianOptimizer b({{0, 64}, {1, 100}}, 0.8);
  for (const auto& [f, c] : std::vector<std::pair<double, double>>{{4, 5}, {32, 50}, {16, 25}, {8, 10}}) {
    a.Add({f, c}, Hill(f, c));
    b.Add({f, c}, Hill(f, c));
  }
  EXPECT_EQ(a.Next(), b.Next());
}

}  // namespace
}  // namespace hvdrun
