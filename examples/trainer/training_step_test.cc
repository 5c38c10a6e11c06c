#include "examples/trainer/training_step.h"

#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <string>

#include "examples/trainer/model_state.h"
#include "examples/trainer/models/image_classifier.h"
#include "examples/trainer/models/model_catalog.h"
#include "runtime/test_job.h"

namespace hvdrun::trainer {
namespace {

// An elastic round with fewer examples left than ranks: rank 1 has none in the step, takes part in
// the gradient average with zeros, and ends with rank 0's parameters.
TEST(TrainingStepTest, ARankWithoutExamplesAddsZeroGradientsAndStaysInStep) {
  std::mutex mutex;
  std::set<std::string> checksums;
  hvdrun::testing::RunRanks(
      2,
      [&](Runtime& runtime) {
        DataParallelGroup group(&runtime);
        std::shared_ptr<ImageClassifier> model = BuildModel(*FindModel("fmnist-cnn"), 28);
        ASSERT_TRUE(BroadcastModelState(*model, group).ok());
        const std::string before = ParameterChecksum(*model);
        TrainingStep step(*model, group, OptimizerSettings{0.1, 0.9}, /*buffers_on_device=*/false);
        const int64_t images = runtime.rank() == 0 ? 4 : 0;
        StatusOr<StepRecord> record = step.Run(
            at::randn({images, 1, 28, 28}), at::randint(10, {images}, at::TensorOptions().dtype(at::kLong)));
        ASSERT_TRUE(record.ok()) << record.status().message();
        EXPECT_EQ(record->images, images);
        if (images == 0) {
          EXPECT_EQ(record->loss, 0);
        }
        std::lock_guard<std::mutex> lock(mutex);
        EXPECT_NE(ParameterChecksum(*model), before) << "rank 0's gradients reach rank " << runtime.rank();
        checksums.insert(ParameterChecksum(*model));
      },
      CollectiveOrder::kNegotiated);
  EXPECT_EQ(checksums.size(), 1U);
}

}  // namespace
}  // namespace hvdrun::trainer
