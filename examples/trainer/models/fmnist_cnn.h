// fmnist-cnn: a small convolutional network for 28×28 single-channel images (Fashion-MNIST, MNIST):
// conv1 (5×5, padding 2) → ReLU → 2×2 max pool → conv2 (5×5, padding 2) → ReLU → 2×2 max pool →
// fc1 → ReLU → fc2 (class scores). The first fully connected layer's width follows the image size:
// a quarter of it per side, so images need at least 4×4 pixels.
#ifndef HVDRUN_EXAMPLES_TRAINER_MODELS_FMNIST_CNN_H_
#define HVDRUN_EXAMPLES_TRAINER_MODELS_FMNIST_CNN_H_

#include <cstdint>
#include <memory>

namespace hvdrun::trainer {

struct FmnistCnnConfig {
  int64_t image_size = 28;
  int64_t input_channels = 1;
  int64_t conv1_channels = 16;
  int64_t conv2_channels = 32;
  int64_t hidden_units = 128;
  int64_t classes = 10;
};

class ImageClassifier;

// A freshly initialized network of `config`, its parameters drawn from torch's global generator.
std::shared_ptr<ImageClassifier> MakeFmnistCnn(const FmnistCnnConfig& config);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_MODELS_FMNIST_CNN_H_
