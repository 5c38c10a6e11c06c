// The models hvdrun-trainer knows, by the name --model takes, with what a run needs to know about
// each before building it (input channels, classes, image sizes, whether a data set exists for it).
// This header does not include torch, so that option parsing can check a model name cheaply.
#ifndef HVDRUN_EXAMPLES_TRAINER_MODELS_MODEL_CATALOG_H_
#define HVDRUN_EXAMPLES_TRAINER_MODELS_MODEL_CATALOG_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hvdrun::trainer {

class ImageClassifier;

struct ModelInfo {
  std::string name;         // as --model takes it: "resnet50"
  std::string description;  // one line for --help and --describe
  int64_t input_channels = 3;
  int64_t classes = 1000;
  int64_t default_image_size = 224;
  // The smallest image side the model can take: below it a feature map shrinks to nothing (or, with
  // BatchNorm, to a single value per channel, which training cannot normalize).
  int64_t min_image_size = 32;
  // True when the model trains on an MNIST-format data set by default; false: synthetic data only.
  bool trains_on_dataset = false;
  // Builds the model for images of image_size × image_size pixels; see BuildModel.
  std::shared_ptr<ImageClassifier> (*build)(const ModelInfo& info, int64_t image_size) = nullptr;
};

// Every model, in the order --help lists them.
const std::vector<ModelInfo>& AllModels();

// The model named `name`, or nullptr.
const ModelInfo* FindModel(std::string_view name);

// "resnet18, resnet50, vgg16, fmnist-cnn": for messages.
std::string ModelNames();

// A freshly initialized model for images of image_size × image_size pixels (at least
// info.min_image_size), its parameters drawn from torch's global generator.
std::shared_ptr<ImageClassifier> BuildModel(const ModelInfo& info, int64_t image_size);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_MODELS_MODEL_CATALOG_H_
