#include "examples/trainer/models/fmnist_cnn.h"

#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "examples/trainer/models/layer_macs.h"
#include "examples/trainer/models/torch_image_classifier.h"

namespace hvdrun::trainer {
namespace {

class FmnistCnn : public TorchImageClassifier {
 public:
  explicit FmnistCnn(const FmnistCnnConfig& config);

  torch::Tensor forward(torch::Tensor images) override;
  int64_t MultiplyAccumulates(int64_t image_size) const override;

 private:
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::Conv2d conv2_{nullptr};
  torch::nn::Linear fc1_{nullptr};
  torch::nn::Linear fc2_{nullptr};
};

FmnistCnn::FmnistCnn(const FmnistCnnConfig& config) {
  const int64_t pooled = config.image_size / 4;
  conv1_ = register_module(
      "conv1", torch::nn::Conv2d(
                   torch::nn::Conv2dOptions(config.input_channels, config.conv1_channels, 5).padding(2)));
  conv2_ = register_module(
      "conv2", torch::nn::Conv2d(
                   torch::nn::Conv2dOptions(config.conv1_channels, config.conv2_channels, 5).padding(2)));
  fc1_ =
      register_module("fc1", torch::nn::Linear(config.conv2_channels * pooled * pooled, config.hidden_units));
  fc2_ = register_module("fc2", torch::nn::Linear(config.hidden_units, config.classes));
}

torch::Tensor FmnistCnn::forward(torch::Tensor images) {
  torch::Tensor x = torch::max_pool2d(torch::relu(conv1_->forward(images)), 2);
  x = torch::max_pool2d(torch::relu(conv2_->forward(x)), 2);
  x = torch::relu(fc1_->forward(x.flatten(1)));
  return fc2_->forward(x);
}

int64_t FmnistCnn::MultiplyAccumulates(int64_t image_size) const {
  FeatureSize size{image_size, image_size};
  int64_t macs = Conv2dMacs(*conv1_, size, &size);
  size = WindowOutput(size, 2, 2, 0);
  macs += Conv2dMacs(*conv2_, size, &size);
  return macs + LinearMacs(*fc1_) + LinearMacs(*fc2_);
}

}  // namespace

std::shared_ptr<ImageClassifier> MakeFmnistCnn(const FmnistCnnConfig& config) {
  return std::make_shared<FmnistCnn>(config);
}

}  // namespace hvdrun::trainer
