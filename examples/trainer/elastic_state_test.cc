#include "examples/trainer/elastic_state.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <string>

#include "examples/trainer/model_state.h"
#include "examples/trainer/models/image_classifier.h"
#include "examples/trainer/models/model_catalog.h"
#include "examples/trainer/training_step.h"
#include "runtime/test_job.h"

namespace hvdrun::trainer {
namespace {

// One SGD step of `step` on random images: moves the parameters and the momentum.
void TrainOneStep(TrainingStep& step) {
  StatusOr<StepRecord> record =
      step.Run(at::randn({4, 1, 28, 28}), at::randint(10, {4}, at::TensorOptions().dtype(at::kLong)));
  ASSERT_TRUE(record.ok()) << record.status().message();
}

TEST(ElasticStateTest, RestoreGoesBackToTheCommittedModelMomentumAndProgress) {
  std::shared_ptr<ImageClassifier> model = BuildModel(*FindModel("fmnist-cnn"), 28);
  DataParallelGroup group;
  auto step = std::make_unique<TrainingStep>(*model, group, OptimizerSettings{0.1, 0.9}, false);
  ElasticState state;
  state.Restore(*model, *step);  // nothing committed yet: nothing changes
  EXPECT_FALSE(state.committed());
  TrainOneStep(*step);
  state.progress.steps = 5;
  state.progress.rounds.push_back({0, 1, 5, 160, 0});
  state.Commit(*model, *step);
  const std::string checksum = ParameterChecksum(*model);
  const at::Tensor momentum = step->MomentumBuffers().front().clone();

  TrainOneStep(*step);
  state.progress.steps = 6;
  ASSERT_NE(ParameterChecksum(*model), checksum);
  state.Restore(*model, *step);
  EXPECT_EQ(ParameterChecksum(*model), checksum);
  EXPECT_TRUE(at::equal(step->MomentumBuffers().front(), momentum));
  EXPECT_EQ(state.progress.steps, 5);
  ASSERT_EQ(state.progress.rounds.size(), 1U);

  // A new round's step, with a new optimizer, gets the committed momentum too.
  step = std::make_unique<TrainingStep>(*model, group, OptimizerSettings{0.1, 0.9}, false);
  EXPECT_FALSE(step->MomentumBuffers().front().defined());
  state.Restore(*model, *step);
  EXPECT_TRUE(at::equal(step->MomentumBuffers().front(), momentum));
}

TEST(ElasticStateTest, SyncGivesEveryRankRankZerosModelMomentumAndProgress) {
  std::mutex mutex;
  std::set<std::string> checksums;
  std::set<double> momenta;
  std::set<int64_t> steps;
  hvdrun::testing::RunRanks(3, [&](Runtime& runtime) {
    DataParallelGroup group(&runtime);
    std::shared_ptr<ImageClassifier> model = BuildModel(*FindModel("fmnist-cnn"), 28);
    TrainingStep step(*model, group, OptimizerSettings{0.1, 0.9}, false);
    ElasticState state;
    {
      // Rank 0 has trained (momentum, progress, a round); the others are new workers.
      at::NoGradGuard no_grad;
      model->parameters().front().add_(static_cast<float>(runtime.rank()));
    }
    if (runtime.rank() == 0) {
      std::vector<at::Tensor> buffers;
      for (const at::Tensor& parameter : model->parameters()) {
        buffers.push_back(at::full_like(parameter, 0.5));
      }
      step.SetMomentumBuffers(buffers);
      state.progress.steps = 7;
      state.progress.processed = 224;
      state.progress.rounds.push_back({0, 3, 7, 224, 0});
      state.progress.epochs.push_back({1, 0.5, 0.75, 100, 1.5});
    }
    Status status = state.Sync(*model, step, group);
    ASSERT_TRUE(status.ok()) << status.message();
    std::lock_guard<std::mutex> lock(mutex);
    checksums.insert(ParameterChecksum(*model));
    for (const at::Tensor& buffer : step.MomentumBuffers()) {
      ASSERT_TRUE(buffer.defined());
      momenta.insert(buffer.mean().item<double>());
    }
    steps.insert(state.progress.steps);
    EXPECT_EQ(state.progress.processed, 224);
    EXPECT_EQ(state.progress.rounds.size(), 1U);
    EXPECT_EQ(state.progress.epochs.size(), 1U);
  });
  EXPECT_EQ(checksums.size(), 1U);
  EXPECT_EQ(momenta, (std::set<double>{0.5}));
  EXPECT_EQ(steps, (std::set<int64_t>{7}));
}

}  // namespace
}  // namespace hvdrun::trainer
