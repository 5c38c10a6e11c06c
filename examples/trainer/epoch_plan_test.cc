#include "examples/trainer/epoch_plan.h"

#include <gtest/gtest.h>

#include <vector>

namespace hvdrun::trainer {
namespace {

// How many times each position of [0, examples) is trained by `ranks` ranks from `processed` on,
// added to `counts`; every rank's batches as sizes in `batches` (per step, per rank).
void Train(int64_t examples, int64_t processed, int ranks, int64_t batch, std::vector<int>& counts,
           std::vector<std::vector<size_t>>* batches = nullptr) {
  for (const StepSlice& slice : PlanRemainingSteps(examples, processed, ranks, batch)) {
    std::vector<size_t> sizes;
    for (int rank = 0; rank < ranks; ++rank) {
      const std::vector<int64_t> positions = RankPositions(slice, rank, ranks);
      for (int64_t position : positions) ++counts.at(static_cast<size_t>(position));
      sizes.push_back(positions.size());
    }
    if (batches != nullptr) batches->push_back(sizes);
  }
}

TEST(EpochPlanTest, EveryExampleOnceInEqualBatches) {
  std::vector<int> counts(100, 0);
  std::vector<std::vector<size_t>> batches;
  Train(100, 0, 4, 5, counts, &batches);
  EXPECT_EQ(counts, std::vector<int>(100, 1));
  ASSERT_EQ(batches.size(), 5U);
  for (const auto& sizes : batches) EXPECT_EQ(sizes, std::vector<size_t>(4, 5));
}

TEST(EpochPlanTest, AShortLastSliceThatWouldLeaveARankEmptyJoinsTheOneBefore) {
  std::vector<int> counts(62, 0);
  std::vector<std::vector<size_t>> batches;
  Train(62, 0, 3, 10, counts, &batches);  // 30, 30, then 2 < 3 ranks: 30 + 2
  EXPECT_EQ(counts, std::vector<int>(62, 1));
  ASSERT_EQ(batches.size(), 2U);
  EXPECT_EQ(batches[1], (std::vector<size_t>{11, 11, 10}));

  std::vector<int> uneven(65, 0);
  batches.clear();
  Train(65, 0, 3, 10, uneven, &batches);  // 30, 30, 5: every rank has one at least
  EXPECT_EQ(uneven, std::vector<int>(65, 1));
  ASSERT_EQ(batches.size(), 3U);
  EXPECT_EQ(batches[2], (std::vector<size_t>{2, 2, 1}));
}

// A round of 3 ranks commits after 4 steps (36 examples of 100) and loses a rank; the round of 2
// ranks plans the rest from the commit: with the first round's examples, each exactly once.
TEST(EpochPlanTest, AfterAChangeOfSizeTheRestIsSplitAmongTheNewRanksEachOnce) {
  constexpr int64_t kExamples = 100;
  std::vector<StepSlice> first = PlanRemainingSteps(kExamples, 0, 3, 3);
  ASSERT_GE(first.size(), 4U);
  std::vector<int> counts(kExamples, 0);
  for (size_t s = 0; s < 4; ++s) {
    for (int rank = 0; rank < 3; ++rank) {
      for (int64_t position : RankPositions(first[s], rank, 3)) ++counts.at(static_cast<size_t>(position));
    }
  }
  const int64_t committed = first[3].end;
  EXPECT_EQ(committed, 36);
  Train(kExamples, committed, 2, 3, counts);
  EXPECT_EQ(counts, std::vector<int>(kExamples, 1));
  // Growth to 5 ranks from the same commit works alike.
  std::vector<int> grown(kExamples, 0);
  for (int64_t p = 0; p < committed; ++p) ++grown[static_cast<size_t>(p)];
  Train(kExamples, committed, 5, 3, grown);
  EXPECT_EQ(grown, std::vector<int>(kExamples, 1));
}

TEST(EpochPlanTest, NothingLeftNoStepAndFewerExamplesThanRanksLeavesSomeRanksEmpty) {
  EXPECT_TRUE(PlanRemainingSteps(10, 10, 2, 4).empty());
  std::vector<StepSlice> steps = PlanRemainingSteps(10, 8, 3, 4);
  ASSERT_EQ(steps.size(), 1U);
  EXPECT_EQ(RankPositions(steps[0], 0, 3), (std::vector<int64_t>{8}));
  EXPECT_EQ(RankPositions(steps[0], 1, 3), (std::vector<int64_t>{9}));
  EXPECT_TRUE(RankPositions(steps[0], 2, 3).empty());
}

}  // namespace
}  // namespace hvdrun::trainer
