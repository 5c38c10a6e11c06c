#include "runtime/autotune/sample_scorer.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace hvdrun {
namespace {

using std::chrono::milliseconds;
using Clock = SampleScorer::Clock;

TEST(SampleScorer, AStepEndsWhereANameComesRoundAgain) {
  const Clock::time_point t0 = Clock::time_point() + std::chrono::seconds(100);
  SampleScorer scorer(2);
  // The job's first round (a, b) is no step: the program's start lies before it.
  EXPECT_FALSE(scorer.Record({"a"}, 1000, t0 + milliseconds(5)));
  EXPECT_FALSE(scorer.Record({"b"}, 1000, t0 + milliseconds(10)));
  // Step 1: a and b in one cycle, 4000 bytes from 10 to 20 ms.
  EXPECT_FALSE(scorer.Record({"a", "b"}, 4000, t0 + milliseconds(20)));
  // Step 2: a, then b, 2000 bytes from 20 to 30 ms.
  EXPECT_FALSE(scorer.Record({"a"}, 1000, t0 + milliseconds(25)));
  EXPECT_FALSE(scorer.Record({"b"}, 1000, t0 + milliseconds(30)));
  // The next round of "a" ends step 2, and with it the sample.
  std::optional<SampleScorer::Score> score = scorer.Record({"a"}, 1000, t0 + milliseconds(35));
  ASSERT_TRUE(score.has_value());
  EXPECT_EQ(score->steps, 2);
  // Rates 400,000 and 200,000 bytes/s: median (their mean, with two) 300,000, deviation 100,000.
  EXPECT_NEAR(score->bytes_per_second, 300000, 1e-6);
  EXPECT_NEAR(score->spread, 100000, 1e-6);
}

TEST(SampleScorer, TheMedianStepIgnoresOneSlowStep) {
  const Clock::time_point t0 = Clock::time_point() + std::chrono::seconds(100);
  SampleScorer scorer(3);
  Clock::time_point t = t0;
  std::optional<SampleScorer::Score> score;
  for (int round = 0; round < 5 && !score; ++round) {
    t += milliseconds(round == 2 ? 100 : 10);  // step 2 is ten times slower
    score = scorer.Record({"x", "y"}, 1000, t);
  }
  ASSERT_TRUE(score.has_value());
  EXPECT_NEAR(score->bytes_per_second, 100000, 1e-6);  // 1000 bytes per 10 ms
}

TEST(SampleScorer, EverySampleAfterTheFirstStartsWhereTheLastEnded) {
  const Clock::time_point t0 = Clock::time_point() + std::chrono::seconds(100);
  SampleScorer scorer(1);
  int samples = 0;
  for (int cycle = 1; cycle <= 7; ++cycle) {
    std::optional<SampleScorer::Score> score = scorer.Record({"w"}, 500, t0 + milliseconds(cycle));
    if (!score) continue;
    ++samples;
    EXPECT_NEAR(score->bytes_per_second, 500000, 1e-3);  // 500 bytes a millisecond
  }
  EXPECT_EQ(samples, 5);  // each cycle after the second ends a one-step sample
}

}  // namespace
}  // namespace hvdrun
