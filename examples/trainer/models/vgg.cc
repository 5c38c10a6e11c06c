#include "examples/trainer/models/vgg.h"

#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include "examples/trainer/models/layer_macs.h"
#include "examples/trainer/models/torch_image_classifier.h"

namespace hvdrun::trainer {
namespace {

constexpr int64_t kPool = 0;
// The adaptive average pool's output, and so the first classifier layer's input, is 7×7.
constexpr int64_t kPooledSize = 7;

}  // namespace

VggConfig Vgg16Config() {
  return {{64, 64, kPool, 128, 128, kPool, 256, 256, 256, kPool, 512, 512, 512, kPool, 512, 512, 512, kPool},
          3,
          1000};
}

namespace {

class Vgg : public TorchImageClassifier {
 public:
  explicit Vgg(const VggConfig& config);

  torch::Tensor forward(torch::Tensor images) override;
  int64_t MultiplyAccumulates(int64_t image_size) const override;

 private:
  VggLayerPlan plan_;
  torch::nn::Sequential features_{nullptr};
  std::vector<torch::nn::Conv2d> convolutions_;  // features_'s convolutions, in order
  torch::nn::Sequential classifier_{nullptr};
  std::vector<torch::nn::Linear> linears_;  // classifier_'s fully connected layers, in order
};

Vgg::Vgg(const VggConfig& config) : plan_(config.features) {
  features_ = torch::nn::Sequential();
  int64_t channels = config.input_channels;
  for (int64_t layer : plan_) {
    if (layer == kPool) {
      features_->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2).stride(2)));
      continue;
    }
    torch::nn::Conv2d conv(torch::nn::Conv2dOptions(channels, layer, 3).padding(1));
    features_->push_back(conv);
    features_->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(/*inplace=*/true)));
    convolutions_.push_back(conv);
    channels = layer;
  }
  register_module("features", features_);

  linears_ = {torch::nn::Linear(channels * kPooledSize * kPooledSize, 4096), torch::nn::Linear(4096, 4096),
              torch::nn::Linear(4096, config.classes)};
  classifier_ = torch::nn::Sequential(
      linears_[0], torch::nn::ReLU(torch::nn::ReLUOptions(true)), torch::nn::Dropout(0.5), linears_[1],
      torch::nn::ReLU(torch::nn::ReLUOptions(true)), torch::nn::Dropout(0.5), linears_[2]);
  register_module("classifier", classifier_);

  // torchvision's initialization.
  for (torch::nn::Conv2d& conv : convolutions_) {
    torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
    torch::nn::init::zeros_(conv->bias);
  }
  for (torch::nn::Linear& linear : linears_) {
    torch::nn::init::normal_(linear->weight, 0.0, 0.01);
    torch::nn::init::zeros_(linear->bias);
  }
}

torch::Tensor Vgg::forward(torch::Tensor images) {
  torch::Tensor x = features_->forward(images);
  x = torch::adaptive_avg_pool2d(x, {kPooledSize, kPooledSize}).flatten(1);
  return classifier_->forward(x);
}

int64_t Vgg::MultiplyAccumulates(int64_t image_size) const {
  FeatureSize size{image_size, image_size};
  int64_t macs = 0;
  size_t next_conv = 0;
  for (int64_t layer : plan_) {
    if (layer == kPool) {
      size = WindowOutput(size, 2, 2, 0);
    } else {
      macs += Conv2dMacs(*convolutions_[next_conv++], size, &size);
    }
  }
  for (const torch::nn::Linear& linear : linears_) macs += LinearMacs(*linear);
  return macs;
}

}  // namespace

std::shared_ptr<ImageClassifier> MakeVgg(const VggConfig& config) { return std::make_shared<Vgg>(config); }

}  // namespace hvdrun::trainer
