#include "examples/trainer/model_description.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "examples/shared/model_gradients.h"
#include "examples/trainer/models/fmnist_cnn.h"
#include "examples/trainer/models/image_classifier.h"
#include "examples/trainer/models/model_catalog.h"

namespace hvdrun::trainer {
namespace {

struct TorchvisionFacts {
  const char* model;
  size_t tensors;
  int64_t parameters;
  const char* first;
  const char* last;
  // torchvision's published GFLOPS (multiply-accumulates of convolutions and linear layers at 224,
  // rounded to 0.01 G).
  double published_gmacs;
};

// The description of the catalog's model `name` (which must exist), built for `image_size`.
ModelDescription Describe(const std::string& name, int64_t image_size) {
  const ModelInfo& info = *FindModel(name);
  return DescribeModel(info, *BuildModel(info, image_size), image_size);
}

class TorchvisionModelTest : public testing::TestWithParam<TorchvisionFacts> {};

TEST_P(TorchvisionModelTest, HasTorchvisionsTensorsTotalsAndWork) {
  const TorchvisionFacts& facts = GetParam();
  const ModelInfo* info = FindModel(facts.model);
  ASSERT_NE(info, nullptr);
  std::shared_ptr<ImageClassifier> model = BuildModel(*info, 224);
  ModelDescription d = DescribeModel(*info, *model, 224);
  EXPECT_EQ(d.parameters.size(), facts.tensors);
  EXPECT_EQ(d.parameter_count, facts.parameters);
  ASSERT_FALSE(d.parameters.empty());
  EXPECT_EQ(d.parameters.front().name, facts.first);
  EXPECT_EQ(d.parameters.back().name, facts.last);
  EXPECT_NEAR(static_cast<double>(d.multiply_accumulates), facts.published_gmacs * 1e9, 0.005e9);
  int64_t sum = 0;
  for (const TensorDescription& t : d.parameters) {
    int64_t elements = 1;
    for (int64_t dim : t.shape) elements *= dim;
    EXPECT_EQ(t.elements, elements) << t.name;
    sum += t.elements;
    EXPECT_EQ(t.name.find("running_"), std::string::npos) << "a buffer listed as a parameter: " << t.name;
  }
  EXPECT_EQ(sum, d.parameter_count);
  std::string text = FormatModelDescription(d);
  EXPECT_NE(text.find(std::to_string(facts.tensors) + " parameter tensors, " +
                      WithThousandsSeparators(facts.parameters) + " parameters"),
            std::string::npos)
      << text;
}

TEST_P(TorchvisionModelTest, TheReplayListIsTheModelsGradientsInBackwardOrder) {
  // hvdrun-bench --replay submits examples/shared/model_gradients.h's list: the same tensors.
  const TorchvisionFacts& facts = GetParam();
  std::optional<std::vector<examples::GradientTensor>> replay = examples::ModelGradients(facts.model);
  ASSERT_TRUE(replay.has_value());
  ModelDescription d = Describe(facts.model, 224);
  ASSERT_EQ(replay->size(), d.parameters.size());
  for (size_t i = 0; i < d.parameters.size(); ++i) {
    const TensorDescription& parameter = d.parameters[d.parameters.size() - 1 - i];
    EXPECT_EQ((*replay)[i].name, parameter.name) << i;
    EXPECT_EQ((*replay)[i].shape, parameter.shape) << parameter.name;
    EXPECT_EQ((*replay)[i].elements(), parameter.elements) << parameter.name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, TorchvisionModelTest,
    testing::Values(TorchvisionFacts{"resnet18", 62, 11'689'512, "conv1.weight", "fc.bias", 1.81},
                    TorchvisionFacts{"resnet50", 161, 25'557'032, "conv1.weight", "fc.bias", 4.09},
                    TorchvisionFacts{"vgg16", 32, 138'357'544, "features.0.weight", "classifier.6.bias",
                                     15.47}),
    [](const testing::TestParamInfo<TorchvisionFacts>& param) { return std::string(param.param.model); });

TEST(ModelDescriptionTest, ResNet50NamesAndShapesFollowTorchvision) {
  std::shared_ptr<ImageClassifier> model = BuildModel(*FindModel("resnet50"), 224);
  ModelDescription d = DescribeModel(*FindModel("resnet50"), *model, 224);
  ASSERT_EQ(d.parameters.size(), 161U);
  EXPECT_EQ(d.parameters[1].name, "bn1.weight");
  EXPECT_EQ(d.parameters[2].name, "bn1.bias");
  EXPECT_EQ(d.parameters[3].name, "layer1.0.conv1.weight");
  EXPECT_EQ(d.parameters[3].shape, (std::vector<int64_t>{64, 64, 1, 1}));
  // Bottleneck: conv1, bn1, conv2, bn2, conv3, bn3, then the downsample branch.
  EXPECT_EQ(d.parameters[12].name, "layer1.0.downsample.0.weight");
  EXPECT_EQ(d.parameters[12].shape, (std::vector<int64_t>{256, 64, 1, 1}));
  EXPECT_EQ(d.parameters[13].name, "layer1.0.downsample.1.weight");
  EXPECT_EQ(d.parameters[159].shape, (std::vector<int64_t>{1000, 2048}));
  // 53 BatchNorm layers, each with running_mean, running_var and num_batches_tracked.
  EXPECT_EQ(d.buffer_tensors, 53 * 3);
  auto buffers = model->named_buffers();
  EXPECT_TRUE(buffers.contains("bn1.running_mean"));
  EXPECT_TRUE(buffers.contains("layer4.2.bn3.running_var"));
}

TEST(ModelDescriptionTest, Vgg16ClassifierTakesTheSevenBySevenPool) {
  ModelDescription d = Describe("vgg16", 224);
  ASSERT_EQ(d.parameters.size(), 32U);
  EXPECT_EQ(d.parameters[2].name, "features.2.weight");
  EXPECT_EQ(d.parameters[4].name, "features.5.weight");
  EXPECT_EQ(d.parameters[25].name, "features.28.bias");
  EXPECT_EQ(d.parameters[26].name, "classifier.0.weight");
  EXPECT_EQ(d.parameters[26].shape, (std::vector<int64_t>{4096, int64_t{512} * 7 * 7}));
  EXPECT_EQ(d.parameters[28].name, "classifier.3.weight");
  EXPECT_EQ(d.buffer_tensors, 0);
}

TEST(ModelDescriptionTest, FmnistCnnCountsFollowItsLayers) {
  const FmnistCnnConfig c;
  ModelDescription d = Describe("fmnist-cnn", 28);
  std::vector<std::string> names;
  for (const TensorDescription& t : d.parameters) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias",
                                             "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}));
  const int64_t flat = c.conv2_channels * 7 * 7;
  EXPECT_EQ(d.parameter_count, (c.conv1_channels * 25 + c.conv1_channels) +
                                   (c.conv2_channels * c.conv1_channels * 25 + c.conv2_channels) +
                                   (flat * c.hidden_units + c.hidden_units) + (c.hidden_units * 10 + 10));
  const int64_t conv1 = int64_t{28} * 28 * c.conv1_channels * 25;
  const int64_t conv2 = int64_t{14} * 14 * c.conv2_channels * c.conv1_channels * 25;
  EXPECT_EQ(d.multiply_accumulates, conv1 + conv2 + flat * c.hidden_units + c.hidden_units * 10);
}

TEST(ModelDescriptionTest, EveryModelMapsImagesToClassScores) {
  at::NoGradGuard no_grad;
  for (const ModelInfo& info : AllModels()) {
    // The smallest image each model takes, so that this stays cheap.
    std::shared_ptr<ImageClassifier> model = BuildModel(info, info.min_image_size);
    model->train(/*on=*/false);
    at::Tensor scores =
        model->forward(at::randn({2, info.input_channels, info.min_image_size, info.min_image_size}));
    EXPECT_EQ(scores.sizes().vec(), (std::vector<int64_t>{2, info.classes})) << info.name;
  }
}

TEST(ModelDescriptionTest, JsonHasTheTensorList) {
  nlohmann::json json = ModelDescriptionToJson(Describe("resnet18", 224));
  EXPECT_EQ(json["parameter_tensors"], 62);
  EXPECT_EQ(json["parameter_count"], 11'689'512);
  EXPECT_EQ(json["parameters"][0]["name"], "conv1.weight");
  EXPECT_EQ(json["parameters"][0]["shape"], nlohmann::json({64, 3, 7, 7}));
  EXPECT_EQ(json["flops_per_image"], 2 * json["macs_per_image"].get<int64_t>());
}

TEST(ModelDescriptionTest, ThousandsSeparators) {
  EXPECT_EQ(WithThousandsSeparators(0), "0");
  EXPECT_EQ(WithThousandsSeparators(999), "999");
  EXPECT_EQ(WithThousandsSeparators(1000), "1,000");
  EXPECT_EQ(WithThousandsSeparators(25557032), "25,557,032");
  EXPECT_EQ(WithThousandsSeparators(-1234567), "-1,234,567");
}

}  // namespace
}  // namespace hvdrun::trainer
