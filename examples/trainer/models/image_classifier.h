// ImageClassifier: the interface every model of hvdrun-trainer implements: a torch module that maps
// a batch of images [N, C, H, W] to class scores [N, classes], and that can count its own work.
//
// Parameters are registered in the order, and under the names, of the reference implementation
// (torchvision for ResNet and VGG), so that named_parameters() lists the same tensors, shapes and
// order. Not thread-safe, as no torch module is.
#ifndef HVDRUN_EXAMPLES_TRAINER_MODELS_IMAGE_CLASSIFIER_H_
#define HVDRUN_EXAMPLES_TRAINER_MODELS_IMAGE_CLASSIFIER_H_

#include <torch/nn/module.h>

#include <cstdint>

namespace hvdrun::trainer {

class ImageClassifier : public torch::nn::Module {
 public:
  // Scores for each image of `images` ([N, C, H, W], float32): [N, classes], before any softmax.
  virtual torch::Tensor forward(torch::Tensor images) = 0;

  // Multiply-accumulates of one forward pass over one image of image_size × image_size pixels,
  // counting the convolutions and fully connected layers (as torchvision's published GFLOPS do;
  // normalization, activations, pooling and additions are not counted).
  virtual int64_t MultiplyAccumulates(int64_t image_size) const = 0;
};

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_MODELS_IMAGE_CLASSIFIER_H_
