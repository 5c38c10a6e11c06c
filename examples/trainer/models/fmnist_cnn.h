// fmnist-cnn: a small convolutional network for 28×28 single-channel images (Fashion-MNIST, MNIST):
// conv1 (5×5, padding 2) → ReLU → 2×2 max pool → conv2 (5×5, padding 2) → ReLU → 2×2 max pool →
// fc1 → ReLU → fc2 (class scores). The first fully connected layer's width follows the image size:
// a quarter of it per side, so images need at least 4×4 pixels.
#ifndef HVDRUN_EXAMPLES_TRAINER_MODELS_FMNIST_CNN_H_
#define HVDRUN_EXAMPLES_TRAINER_MODELS_FMNIST_CNN_H_

#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>

#include "examples/trainer/models/image_classifier.h"

namespace hvdrun::trainer {

struct FmnistCnnConfig {
  int64_t image_size = 28;
  int64_t input_channels = 1;
  int64_t conv1_channels = 16;
  int64_t conv2_channels = 32;
  int64_t hidden_units = 128;
  int64_t classes = 10;
};

class FmnistCnn : public ImageClassifier {
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

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_MODELS_FMNIST_CNN_H_
