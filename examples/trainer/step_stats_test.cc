#include "examples/trainer/step_stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace hvdrun::trainer {
namespace {

StepRecord Step(double step_s, double wait_s, int64_t images) {
  StepRecord step;
  step.step_s = step_s;
  step.comm_wait_s = wait_s;
  step.compute_s = step_s - wait_s;
  step.images = images;
  return step;
}

TEST(StepStatsTest, NoStepsGiveZeros) {
  StepSummary summary = SummarizeSteps({});
  EXPECT_EQ(summary.steps, 0);
  EXPECT_EQ(summary.img_per_sec, 0);
}

TEST(StepStatsTest, MeansAndThroughput) {
  StepSummary summary = SummarizeSteps({Step(1.0, 0.25, 32), Step(2.0, 0.75, 32), Step(1.0, 0.5, 16)});
  EXPECT_EQ(summary.steps, 3);
  EXPECT_EQ(summary.images, 80);
  EXPECT_DOUBLE_EQ(summary.mean_step_s, 4.0 / 3);
  EXPECT_DOUBLE_EQ(summary.mean_comm_wait_s, 0.5);
  EXPECT_DOUBLE_EQ(summary.mean_compute_s, 4.0 / 3 - 0.5);
  EXPECT_DOUBLE_EQ(summary.img_per_sec, 20);  // 80 images in 4 s, not the mean of 32, 16, 16
  // Sample standard deviation of 32, 16 and 16 images/s.
  EXPECT_NEAR(summary.img_per_sec_stddev,
              std::sqrt((std::pow(32 - 64.0 / 3, 2) + 2 * std::pow(16 - 64.0 / 3, 2)) / 2), 1e-9);
  EXPECT_DOUBLE_EQ(Step(0.5, 0, 16).img_per_sec(), 32);
  EXPECT_EQ(Step(0, 0, 16).img_per_sec(), 0);
}

}  // namespace
}  // namespace hvdrun::trainer
