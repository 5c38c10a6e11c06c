// The gradient tensors of the models hvdrun-trainer trains (resnet18, resnet50, vgg16, as
// torchvision defines them, 1000 classes, 3 input channels), by name and shape, in the order a
// backward pass produces them (the reverse of registration order): what hvdrun-bench --replay
// submits, with no deep-learning framework. A trainer test keeps these lists equal to the models'.
#ifndef HVDRUN_EXAMPLES_SHARED_MODEL_GRADIENTS_H_
#define HVDRUN_EXAMPLES_SHARED_MODEL_GRADIENTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hvdrun::examples {

struct GradientTensor {
  std::string name;  // the parameter's name: "layer4.1.bn2.bias"
  std::vector<int64_t> shape;

  int64_t elements() const;
};

// The models ModelGradients knows, in the order --replay's help lists them.
const std::vector<std::string>& ReplayModels();
// std::nullopt for a model it does not know.
std::optional<std::vector<GradientTensor>> ModelGradients(std::string_view model);

}  // namespace hvdrun::examples

#endif  // HVDRUN_EXAMPLES_SHARED_MODEL_GRADIENTS_H_
