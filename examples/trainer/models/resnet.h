// ResNet-18 and ResNet-50 as torchvision defines them (v1.5: the stride of a bottleneck block is on
// its 3×3 convolution), with torchvision's parameter names, shapes and order ("conv1.weight",
// "bn1.weight", "bn1.bias", "layer1.0.conv1.weight", ..., "fc.bias") and its initialization
// (Kaiming-normal convolutions, BatchNorm weight 1 and bias 0, PyTorch's default for the
// classifier). BatchNorm running statistics are buffers, not parameters.
#ifndef HVDRUN_EXAMPLES_TRAINER_MODELS_RESNET_H_
#define HVDRUN_EXAMPLES_TRAINER_MODELS_RESNET_H_

#include <array>
#include <cstdint>
#include <memory>

namespace hvdrun::trainer {

enum class ResNetBlock {
  kBasic,       // two 3×3 convolutions (ResNet-18, -34)
  kBottleneck,  // 1×1, 3×3, 1×1 convolutions, four times as many output channels (ResNet-50, ...)
};

struct ResNetConfig {
  ResNetBlock block = ResNetBlock::kBasic;
  std::array<int64_t, 4> blocks_per_stage = {2, 2, 2, 2};
  int64_t input_channels = 3;
  int64_t classes = 1000;
};

// torchvision's resnet18 (11,689,512 parameters) and resnet50 (25,557,032).
ResNetConfig ResNet18Config();
ResNetConfig ResNet50Config();

class ImageClassifier;

// A freshly initialized ResNet of `config` (torchvision's initialization, above), its parameters
// drawn from torch's global generator.
std::shared_ptr<ImageClassifier> MakeResNet(const ResNetConfig& config);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_MODELS_RESNET_H_
