// ImageClassifier: the interface every model of hvdrun-trainer implements: a map from a batch of
// images [N, C, H, W] to class scores [N, classes], the tensors that make up its state, and a count
// of its own work.
//
// Every model is a torch module (models/torch_image_classifier.h); this interface gives the rest of
// the trainer what it uses of one, so that the files that train, describe or broadcast a model
// include ATen's Tensor alone, not torch::nn, the heaviest of torch's headers to compile and lint.
// Parameters are registered in the order, and under the names, of the reference implementation
// (torchvision for ResNet and VGG), so that named_parameters() lists the same tensors, shapes and
// order. Not thread-safe, as no torch module is.
#ifndef HVDRUN_EXAMPLES_TRAINER_MODELS_IMAGE_CLASSIFIER_H_
#define HVDRUN_EXAMPLES_TRAINER_MODELS_IMAGE_CLASSIFIER_H_

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <torch/ordered_dict.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hvdrun::trainer {

class ImageClassifier {
 public:
  virtual ~ImageClassifier() = default;

  // Scores for each image of `images` ([N, C, H, W], float32): [N, classes], before any softmax.
  virtual at::Tensor forward(at::Tensor images) = 0;

  // Multiply-accumulates of one forward pass over one image of image_size × image_size pixels,
  // counting the convolutions and fully connected layers (as torchvision's published GFLOPS do;
  // normalization, activations, pooling and additions are not counted).
  virtual int64_t MultiplyAccumulates(int64_t image_size) const = 0;

  // As torch::nn::Module's, over the whole model (recursively): the parameters in registration
  // order, with their dotted names ("layer1.0.conv1.weight"), and the buffers (BatchNorm's running
  // statistics) by name. The tensors are the model's own, not copies.
  virtual std::vector<at::Tensor> parameters() const = 0;
  virtual torch::OrderedDict<std::string, at::Tensor> named_parameters() const = 0;
  virtual torch::OrderedDict<std::string, at::Tensor> named_buffers() const = 0;

  // Training mode (true: BatchNorm uses and updates batch statistics, dropout drops) or
  // evaluation mode (false), as torch::nn::Module::train.
  virtual void train(bool on) = 0;

  // Moves every parameter and buffer to `device` (torch::nn::Module::to).
  virtual void MoveTo(at::Device device) = 0;
};

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_MODELS_IMAGE_CLASSIFIER_H_
