#include "examples/trainer/model_state.h"

#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <string>

#include "examples/trainer/models/image_classifier.h"
#include "examples/trainer/models/model_catalog.h"
#include "runtime/test_job.h"

namespace hvdrun::trainer {
namespace {

TEST(ModelStateTest, ChecksumFollowsEveryParameterBit) {
  std::shared_ptr<ImageClassifier> model = BuildModel(*FindModel("fmnist-cnn"), 28);
  const std::string before = ParameterChecksum(*model);
  EXPECT_EQ(before.size(), 16U);
  EXPECT_EQ(ParameterChecksum(*model), before);
  {
    at::NoGradGuard no_grad;
    at::Tensor last = model->parameters().back();
    last.view(-1)[0].add_(1e-6F);  // the smallest change still changes the bits
  }
  EXPECT_NE(ParameterChecksum(*model), before);
}

TEST(ModelStateTest, BroadcastGivesEveryRankRankZerosParametersAndBuffers) {
  std::mutex mutex;
  std::set<std::string> before;
  std::set<std::string> after;
  std::set<double> running_means;
  hvdrun::testing::RunRanks(3, [&](Runtime& runtime) {
    DataParallelGroup group(&runtime);
    std::shared_ptr<ImageClassifier> model = BuildModel(*FindModel("resnet18"), 32);
    {
      // Ranks start from different parameters and BatchNorm statistics.
      at::NoGradGuard no_grad;
      model->parameters().front().add_(static_cast<float>(runtime.rank()));
      model->named_buffers()["bn1.running_mean"].fill_(static_cast<float>(runtime.rank() + 1));
    }
    std::string mine = ParameterChecksum(*model);
    Status status = BroadcastModelState(*model, group);
    ASSERT_TRUE(status.ok()) << status.message();
    std::lock_guard<std::mutex> lock(mutex);
    before.insert(mine);
    after.insert(ParameterChecksum(*model));
    running_means.insert(model->named_buffers()["bn1.running_mean"].mean().item<double>());
  });
  EXPECT_EQ(before.size(), 3U);
  EXPECT_EQ(after.size(), 1U);
  EXPECT_EQ(running_means, (std::set<double>{1.0}));
}

}  // namespace
}  // namespace hvdrun::trainer
