#include "examples/shared/model_gradients.h"

#include <algorithm>
#include <array>

namespace hvdrun::examples {
namespace {

// Parameters in registration order; ModelGradients reverses them.
class ParameterList {
 public:
  void Add(std::string name, std::vector<int64_t> shape) {
    tensors_.push_back(GradientTensor{std::move(name), std::move(shape)});
  }
  void Conv(const std::string& prefix, int64_t out, int64_t in, int64_t kernel) {
    Add(prefix + ".weight", {out, in, kernel, kernel});
  }
  void BatchNorm(const std::string& prefix, int64_t channels) {
    Add(prefix + ".weight", {channels});
    Add(prefix + ".bias", {channels});
  }
  void Linear(const std::string& prefix, int64_t out, int64_t in) {
    Add(prefix + ".weight", {out, in});
    Add(prefix + ".bias", {out});
  }
  std::vector<GradientTensor> InBackwardOrder() && {
    std::reverse(tensors_.begin(), tensors_.end());
    return std::move(tensors_);
  }

 private:
  std::vector<GradientTensor> tensors_;
};

constexpr int64_t kClasses = 1000;

// torchvision's ResNet: basic blocks (resnet18) or bottlenecks (resnet50, expansion 4).
std::vector<GradientTensor> ResNet(const std::array<int, 4>& blocks, bool bottleneck) {
  ParameterList list;
  list.Conv("conv1", 64, 3, 7);
  list.BatchNorm("bn1", 64);
  const int64_t expansion = bottleneck ? 4 : 1;
  int64_t in = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t planes = int64_t{64} << stage;
    const int64_t out = planes * expansion;
    for (int block = 0; block < blocks[static_cast<size_t>(stage)]; ++block) {
      const std::string prefix = "layer" + std::to_string(stage + 1) + "." + std::to_string(block);
      if (bottleneck) {
        list.Conv(prefix + ".conv1", planes, in, 1);
        list.BatchNorm(prefix + ".bn1", planes);
        list.Conv(prefix + ".conv2", planes, planes, 3);
        list.BatchNorm(prefix + ".bn2", planes);
        list.Conv(prefix + ".conv3", out, planes, 1);
        list.BatchNorm(prefix + ".bn3", out);
      } else {
        list.Conv(prefix + ".conv1", planes, in, 3);
        list.BatchNorm(prefix + ".bn1", planes);
        list.Conv(prefix + ".conv2", planes, planes, 3);
        list.BatchNorm(prefix + ".bn2", planes);
      }
      // The first block of a stage changes the shape (stride 2, or more channels).
      if (block == 0 && (stage > 0 || in != out)) {
        list.Conv(prefix + ".downsample.0", out, in, 1);
        list.BatchNorm(prefix + ".downsample.1", out);
      }
      in = out;
    }
  }
  list.Linear("fc", kClasses, in);
  return std::move(list).InBackwardOrder();
}

// torchvision's VGG-16 (configuration D, no batch norm): features.N for the convolutions, where
// N counts every layer (convolution, ReLU, pooling), then classifier.0/3/6.
std::vector<GradientTensor> Vgg16() {
  constexpr int64_t kPool = 0;
  constexpr std::array<int64_t, 18> kLayers = {64,    64,  kPool, 128, 128,   kPool, 256, 256, 256,
                                               kPool, 512, 512,   512, kPool, 512,   512, 512, kPool};
  ParameterList list;
  int64_t index = 0;
  int64_t in = 3;
  for (int64_t channels : kLayers) {
    if (channels == kPool) {
      ++index;
      continue;
    }
    const std::string prefix = "features." + std::to_string(index);
    list.Add(prefix + ".weight", {channels, in, 3, 3});
    list.Add(prefix + ".bias", {channels});
    in = channels;
    index += 2;  // the convolution and its ReLU
  }
  list.Linear("classifier.0", 4096, int64_t{512} * 7 * 7);
  list.Linear("classifier.3", 4096, 4096);
  list.Linear("classifier.6", kClasses, 4096);
  return std::move(list).InBackwardOrder();
}

}  // namespace

int64_t GradientTensor::elements() const {
  int64_t n = 1;
  for (int64_t dimension : shape) n *= dimension;
  return n;
}

const std::vector<std::string>& ReplayModels() {
  static const std::vector<std::string> kModels = {"resnet18", "resnet50", "vgg16"};
  return kModels;
}

std::optional<std::vector<GradientTensor>> ModelGradients(std::string_view model) {
  if (model == "resnet18") return ResNet({2, 2, 2, 2}, /*bottleneck=*/false);
  if (model == "resnet50") return ResNet({3, 4, 6, 3}, /*bottleneck=*/true);
  if (model == "vgg16") return Vgg16();
  return std::nullopt;
}

}  // namespace hvdrun::examples
