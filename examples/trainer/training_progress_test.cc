#include "examples/trainer/training_progress.h"

#include <gtest/gtest.h>

namespace hvdrun::trainer {
namespace {

TEST(TrainingProgressTest, PackedAndUnpackedItIsTheSame) {
  TrainingProgress p;
  p.epoch = 3;
  p.processed = 4'096;
  p.steps = 123'456'789'012;
  p.samples = 9'000'000'000'001;
  p.epoch_loss_sum = 17.25;
  p.reform_s = 0.75;
  p.rounds = {{0, 3, 40, 7'680, 0}, {1, 2, 12, 1'536, 1.5}};
  p.epochs = {{1, 0.9, 0.7, 2'000, 1.25}, {2, 0.5, 0.8, 2'000, 1.5}};
  StatusOr<TrainingProgress> back = UnpackProgress(PackProgress(p));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->epoch, 3);
  EXPECT_EQ(back->processed, 4'096);
  EXPECT_EQ(back->steps, 123'456'789'012);
  EXPECT_EQ(back->samples, 9'000'000'000'001);
  EXPECT_DOUBLE_EQ(back->epoch_loss_sum, 17.25);
  EXPECT_DOUBLE_EQ(back->reform_s, 0.75);
  ASSERT_EQ(back->rounds.size(), 2U);
  EXPECT_EQ(back->rounds[1].round, 1);
  EXPECT_EQ(back->rounds[1].ranks, 2);
  EXPECT_EQ(back->rounds[1].steps, 12);
  EXPECT_EQ(back->rounds[1].samples, 1'536);
  EXPECT_DOUBLE_EQ(back->rounds[1].reform_s, 1.5);
  ASSERT_EQ(back->epochs.size(), 2U);
  EXPECT_EQ(back->epochs[1].epoch, 2);
  EXPECT_DOUBLE_EQ(back->epochs[1].train_loss, 0.5);
  EXPECT_DOUBLE_EQ(back->epochs[1].test_accuracy, 0.8);
  EXPECT_EQ(back->epochs[1].test_examples, 2'000);
}

TEST(TrainingProgressTest, AVectorOfTheWrongSizeIsAnError) {
  EXPECT_EQ(UnpackProgress({1, 2}).status().message(), "training progress: 2 values, fewer than 8");
  std::vector<double> packed = PackProgress(TrainingProgress{});
  packed[6] = 1;  // one round announced, none packed
  EXPECT_EQ(UnpackProgress(packed).status().message(),
            "training progress: 8 values for 1 rounds and 0 epochs");
}

}  // namespace
}  // namespace hvdrun::trainer
