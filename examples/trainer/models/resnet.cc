#include "examples/trainer/models/resnet.h"

#include <torch/nn/init.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <string>
#include <utility>
#include <vector>

#include "examples/trainer/models/layer_macs.h"
#include "examples/trainer/models/torch_image_classifier.h"

namespace hvdrun::trainer {

ResNetConfig ResNet18Config() { return {ResNetBlock::kBasic, {2, 2, 2, 2}, 3, 1000}; }

ResNetConfig ResNet50Config() { return {ResNetBlock::kBottleneck, {3, 4, 6, 3}, 3, 1000}; }

namespace {

torch::nn::Conv2d Conv(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

int64_t Expansion(ResNetBlock block) { return block == ResNetBlock::kBottleneck ? 4 : 1; }

// torchvision's BasicBlock or Bottleneck: conv1, bn1, conv2, bn2, [conv3, bn3,] [downsample.0
// (1×1 convolution), downsample.1 (BatchNorm)], registered in that order.
class ResidualBlock : public torch::nn::Module {
 public:
  ResidualBlock(ResNetBlock block, int64_t in_channels, int64_t planes, int64_t stride) {
    const bool bottleneck = block == ResNetBlock::kBottleneck;
    const int64_t out_channels = planes * Expansion(block);
    if (bottleneck) {
      conv1_ = register_module("conv1", Conv(in_channels, planes, 1, 1));
      bn1_ = register_module("bn1", torch::nn::BatchNorm2d(planes));
      conv2_ = register_module("conv2", Conv(planes, planes, 3, stride));
      bn2_ = register_module("bn2", torch::nn::BatchNorm2d(planes));
      conv3_ = register_module("conv3", Conv(planes, out_channels, 1, 1));
      bn3_ = register_module("bn3", torch::nn::BatchNorm2d(out_channels));
    } else {
      conv1_ = register_module("conv1", Conv(in_channels, planes, 3, stride));
      bn1_ = register_module("bn1", torch::nn::BatchNorm2d(planes));
      conv2_ = register_module("conv2", Conv(planes, planes, 3, 1));
      bn2_ = register_module("bn2", torch::nn::BatchNorm2d(planes));
    }
    if (stride != 1 || in_channels != out_channels) {
      downsample_conv_ = Conv(in_channels, out_channels, 1, stride);
      torch::nn::Sequential downsample(downsample_conv_, torch::nn::BatchNorm2d(out_channels));
      downsample_ = register_module("downsample", downsample);
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor out = torch::relu(bn1_->forward(conv1_->forward(x)));
    out = bn2_->forward(conv2_->forward(out));
    if (conv3_) out = bn3_->forward(conv3_->forward(torch::relu(out)));
    torch::Tensor identity = downsample_ ? downsample_->forward(x) : x;
    return torch::relu(out + identity);
  }

  int64_t MultiplyAccumulates(FeatureSize in, FeatureSize* out) const {
    FeatureSize size = in;
    int64_t macs = Conv2dMacs(*conv1_, size, &size);
    macs += Conv2dMacs(*conv2_, size, &size);
    if (conv3_) macs += Conv2dMacs(*conv3_, size, &size);
    if (downsample_conv_) {
      FeatureSize ignored;
      macs += Conv2dMacs(*downsample_conv_, in, &ignored);
    }
    *out = size;
    return macs;
  }

 private:
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr};
  torch::nn::Conv2d conv2_{nullptr};
  torch::nn::BatchNorm2d bn2_{nullptr};
  torch::nn::Conv2d conv3_{nullptr};
  torch::nn::BatchNorm2d bn3_{nullptr};
  torch::nn::Sequential downsample_{nullptr};
  torch::nn::Conv2d downsample_conv_{nullptr};  // downsample_'s first layer
};

class ResNet : public TorchImageClassifier {
 public:
  explicit ResNet(const ResNetConfig& config);

  torch::Tensor forward(torch::Tensor images) override;
  int64_t MultiplyAccumulates(int64_t image_size) const override;

 private:
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr};
  // "layer1" ... "layer4"; blocks_ holds the same blocks, in forward order, to count their work.
  std::array<torch::nn::Sequential, 4> stages_;
  std::vector<std::shared_ptr<ResidualBlock>> blocks_;
  torch::nn::Linear fc_{nullptr};
};

ResNet::ResNet(const ResNetConfig& config) {
  conv1_ = register_module(
      "conv1", torch::nn::Conv2d(
                   torch::nn::Conv2dOptions(config.input_channels, 64, 7).stride(2).padding(3).bias(false)));
  bn1_ = register_module("bn1", torch::nn::BatchNorm2d(64));
  int64_t in_channels = 64;
  for (size_t stage = 0; stage < stages_.size(); ++stage) {
    const int64_t planes = int64_t{64} << stage;
    stages_[stage] = torch::nn::Sequential();
    for (int64_t b = 0; b < config.blocks_per_stage[stage]; ++b) {
      const int64_t stride = stage > 0 && b == 0 ? 2 : 1;
      auto block = std::make_shared<ResidualBlock>(config.block, in_channels, planes, stride);
      stages_[stage]->push_back(block);
      blocks_.push_back(std::move(block));
      in_channels = planes * Expansion(config.block);
    }
    register_module("layer" + std::to_string(stage + 1), stages_[stage]);
  }
  fc_ = register_module("fc", torch::nn::Linear(in_channels, config.classes));

  // torchvision's initialization (the classifier keeps PyTorch's default).
  for (const std::shared_ptr<torch::nn::Module>& module : modules(/*include_self=*/false)) {
    if (auto* conv = module->as<torch::nn::Conv2dImpl>()) {
      torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
    } else if (auto* norm = module->as<torch::nn::BatchNorm2dImpl>()) {
      torch::nn::init::ones_(norm->weight);
      torch::nn::init::zeros_(norm->bias);
    }
  }
}

torch::Tensor ResNet::forward(torch::Tensor images) {
  torch::Tensor x = torch::relu(bn1_->forward(conv1_->forward(images)));
  x = torch::max_pool2d(x, /*kernel_size=*/3, /*stride=*/2, /*padding=*/1);
  for (torch::nn::Sequential& stage : stages_) x = stage->forward(x);
  x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
  return fc_->forward(x);
}

int64_t ResNet::MultiplyAccumulates(int64_t image_size) const {
  FeatureSize size{image_size, image_size};
  int64_t macs = Conv2dMacs(*conv1_, size, &size);
  size = WindowOutput(size, 3, 2, 1);
  for (const std::shared_ptr<ResidualBlock>& block : blocks_) macs += block->MultiplyAccumulates(size, &size);
  return macs + LinearMacs(*fc_);
}

}  // namespace

std::shared_ptr<ImageClassifier> MakeResNet(const ResNetConfig& config) {
  return std::make_shared<ResNet>(config);
}

}  // namespace hvdrun::trainer
