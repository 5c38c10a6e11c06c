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

// Horovod's SyncBatchNorm gives every layer's collectives one name: "bn" runs four times a step,
// between the gradients' allreduces. Once the gradients' rounds have shown that, "bn" ends no step,
// and every step is the whole of one: 6 cycles, 1 ms each, 6300 bytes (100 a cycle of "bn" alone,
// 2000 a cycle with a gradient).
TEST(SampleScorer, ANameUsedSeveralTimesAStepEndsNoStepOnceThatIsSeen) {
  const Clock::time_point t0 = Clock::time_point() + std::chrono::seconds(100);
  const std::vector<std::vector<std::string>> step = {{"bn"}, {"bn"}, {"g1", "bn"}, {"bn"}, {"g2"}, {"g3"}};
  SampleScorer scorer(2);
  Clock::time_point t = t0;
  std::vector<SampleScorer::Score> scores;
  for (int round = 0; round < 8; ++round) {
    for (const std::vector<std::string>& cycle : step) {
      t += milliseconds(1);
      const uint64_t bytes = cycle.back() == "bn" && cycle.size() == 1 ? 100 : 2000;
      std::optional<SampleScorer::Score> score = scorer.Record(cycle, bytes, t);
      if (score) scores.push_back(*score);
    }
  }
  // The first rounds are cut where "bn" comes again, until g1's second round has seen it four
  // times; the last samples are of whole steps: 6300 bytes in 6 ms.
  ASSERT_GE(scores.size(), 3u);
  for (size_t i = scores.size() - 2; i < scores.size(); ++i) {
    EXPECT_EQ(scores[i].steps, 2) << "sample " << i;
    EXPECT_NEAR(scores[i].bytes_per_second, 1.05e6, 1e-3) << "sample " << i;
    EXPECT_NEAR(scores[i].spread, 0, 1e-3) << "sample " << i;
  }
}

// Names used once a step whose order changes from step to step still end steps: each runs at
// most twice between two rounds of another.
TEST(SampleScorer, NamesWhoseOrderChangesStillEndSteps) {
  const Clock::time_point t0 = Clock::time_point() + std::chrono::seconds(100);
  SampleScorer scorer(1);
  Clock::time_point t = t0;
  int samples = 0;
  for (int round = 0; round < 10; ++round) {
    const bool swapped = round % 2 == 1;
    for (const char* name : {swapped ? "b" : "a", swapped ? "a" : "b"}) {
      t += milliseconds(1);
      if (scorer.Record({name}, 1000, t)) ++samples;
    }
  }
  EXPECT_EQ(samples, 8);  // every round after the first two (the job's first round is no step)
}

}  // namespace
}  // namespace hvdrun
