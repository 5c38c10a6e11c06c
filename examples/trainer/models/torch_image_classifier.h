// TorchImageClassifier: the base of every model: a torch module that is an ImageClassifier, whose
// parameters, buffers, mode and device are the module's. A model registers its layers with
// register_module, in the reference implementation's order, and defines forward and
// MultiplyAccumulates.
#ifndef HVDRUN_EXAMPLES_TRAINER_MODELS_TORCH_IMAGE_CLASSIFIER_H_
#define HVDRUN_EXAMPLES_TRAINER_MODELS_TORCH_IMAGE_CLASSIFIER_H_

#include <torch/nn/module.h>

#include <string>
#include <vector>

#include "examples/trainer/models/image_classifier.h"

namespace hvdrun::trainer {

class TorchImageClassifier : public torch::nn::Module, public ImageClassifier {
 public:
  std::vector<at::Tensor> parameters() const override { return Module::parameters(/*recurse=*/true); }
  torch::OrderedDict<std::string, at::Tensor> named_parameters() const override {
    return Module::named_parameters(/*recurse=*/true);
  }
  torch::OrderedDict<std::string, at::Tensor> named_buffers() const override {
    return Module::named_buffers(/*recurse=*/true);
  }
  void train(bool on) override { Module::train(on); }
  void MoveTo(at::Device device) override { Module::to(device); }
};

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_MODELS_TORCH_IMAGE_CLASSIFIER_H_
