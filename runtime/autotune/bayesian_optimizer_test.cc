#include "runtime/autotune/bayesian_optimizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
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
  // Within 12% of the optimum after the start, the design and six proposals (the last 8 samples
  // confirm), where the design alone reaches 78% of it (19.2 MiB, 10 ms).
  EXPECT_GT(search.best_score(), 880)
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
  EXPECT_GT(Hill(search.best().fusion_threshold_mib, search.best().cycle_time_ms), 860);
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

// On a shared machine the noise drifts: here a quiet spell makes samples 6 and 7 (the last point
// of the design and the search's first proposal) score twice what they are worth. The setting is
// kept only if it beats the start beside it at the end (the last 8 of the 20 samples).
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
  // The confirmation: the start and the challenger (the model's best), alternately, the start first.
  for (size_t i = 12; i < 20; ++i) {
    const TunedSetting expected = i % 2 == 0 ? TunedSetting{128, 1} : measured[13];
    EXPECT_EQ(measured[i].fusion_threshold_mib, expected.fusion_threshold_mib) << i;
    EXPECT_EQ(measured[i].cycle_time_ms, expected.cycle_time_ms) << i;
  }
  EXPECT_FALSE(measured[13].fusion_threshold_mib == 128 && measured[13].cycle_time_ms == 1);
  EXPECT_EQ(search.best().fusion_threshold_mib, 128);
  EXPECT_EQ(search.best().cycle_time_ms, 1);
  EXPECT_EQ(search.best_score(), 1000);
  EXPECT_EQ(search.start_score(), 1000);
}

// A challenger 20% better in two of its four confirmation samples and worse (900) in the other two
// is not kept: the start is. Slightly worse (980) in one only, it is.
TEST(BayesianOptimizer, TheChallengerMustWinNearlyEveryTimeBesideTheStart) {
  for (const int losses : {1, 2}) {
    SettingSearch search({128, 1}, false, false, 20, 0.8);
    int sample = 0;
    while (!search.done()) {
      const bool start = search.current().fusion_threshold_mib == 128;
      ++sample;
      double score = start ? 1000 : 1200;
      // The challenger's confirmation samples are the 14th, 16th, 18th and 20th.
      if (sample == 20 && losses >= 1) score = losses == 1 ? 980 : 900;
      if (sample == 18 && losses >= 2) score = 900;
      search.Scored(score);
    }
    EXPECT_EQ(search.best().fusion_threshold_mib == 128, losses == 2);
    EXPECT_EQ(search.start_score(), 1000);
  }
}

// The design spreads the first samples over both axes, the cycle time on a log scale: the search
// scores cycles of under 2 ms and over 50 ms, and fusion thresholds of under 10 and over 50 MiB,
// before the model proposes anything.
TEST(BayesianOptimizer, TheFirstSamplesSpreadOverTheWholeBox) {
  SettingSearch search({128, 1}, false, false, 20, 0.8);
  std::vector<TunedSetting> design;
  search.Scored(1000);
  for (int i = 0; i < SettingSearch::kDesignSamples; ++i) {
    design.push_back(search.current());
    search.Scored(1000);
  }
  auto count = [&](auto predicate) { return std::count_if(design.begin(), design.end(), predicate); };
  EXPECT_EQ(count([](const TunedSetting& s) { return s.cycle_time_ms < 2; }), 1);
  EXPECT_EQ(count([](const TunedSetting& s) { return s.cycle_time_ms > 50; }), 1);
  EXPECT_EQ(count([](const TunedSetting& s) { return s.cycle_time_ms > 3 && s.cycle_time_ms < 30; }), 3);
  EXPECT_EQ(count([](const TunedSetting& s) { return s.fusion_threshold_mib < 10; }), 1);
  EXPECT_EQ(count([](const TunedSetting& s) { return s.fusion_threshold_mib > 50; }), 1);
}

// A job like the replay measured in docs/benchmarks.md: the start (128 MiB, 1 ms) is fair, the
// best is a large buffer at a few milliseconds' cycle, 30% better, and the scores drift by +-10%
// over a few samples. The search must end within 5% of the best in most seeds, and never worse
// than the start by more than 2%.
TEST(BayesianOptimizer, EndsNearABestAwayFromTheStartUnderDrift) {
  auto worth = [](const TunedSetting& s) {
    const double df = (std::min(s.fusion_threshold_mib, 80.0) - 80) / 40;
    const double dc = std::log10(s.cycle_time_ms / 5) / 0.6;
    return 1000 + 300 * std::exp(-(df * df + dc * dc));
  };
  const double top = 1300;
  const double start = worth({128, 1});
  int near_top = 0;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 random(seed);
    auto uniform = [&](double low, double high) {
      return low + (high - low) * static_cast<double>(random()) / 4294967296.0;
    };
    double drift = uniform(0.9, 1.1);
    SettingSearch search({128, 1}, false, false, 20, 0.8);
    while (!search.done()) {
      if (uniform(0, 1) < 0.3) drift = uniform(0.9, 1.1);
      search.Scored(worth(search.current()) * drift * uniform(0.97, 1.03));
    }
    const double kept = worth(search.best());
    EXPECT_GE(kept, start * 0.98) << seed;
    near_top += kept >= top / 1.05 ? 1 : 0;
  }
  EXPECT_GE(near_top, 14);
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
