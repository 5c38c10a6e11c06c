// VGG-16 (configuration "D", without BatchNorm) as torchvision defines it: "features" (13 3×3
// convolutions, each followed by ReLU, in five groups closed by 2×2 max pooling), a 7×7 adaptive
// average pool, and "classifier" (4096, 4096, 1000 with ReLU and dropout), with torchvision's
// parameter names ("features.0.weight" ... "classifier.6.bias"), shapes, order and initialization.
#ifndef HVDRUN_EXAMPLES_TRAINER_MODELS_VGG_H_
#define HVDRUN_EXAMPLES_TRAINER_MODELS_VGG_H_

#include <cstdint>
#include <memory>
#include <vector>

namespace hvdrun::trainer {

// A 3×3 convolution with this many output channels, or 0 for a 2×2 max pooling.
using VggLayerPlan = std::vector<int64_t>;

struct VggConfig {
  VggLayerPlan features;
  int64_t input_channels = 3;
  int64_t classes = 1000;
};

// torchvision's vgg16: 138,357,544 parameters.
VggConfig Vgg16Config();

class ImageClassifier;

// A freshly initialized VGG of `config` (torchvision's initialization), its parameters drawn from
// torch's global generator.
std::shared_ptr<ImageClassifier> MakeVgg(const VggConfig& config);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_MODELS_VGG_H_
