#include "examples/trainer/models/model_catalog.h"

#include "examples/trainer/models/fmnist_cnn.h"
#include "examples/trainer/models/resnet.h"
#include "examples/trainer/models/vgg.h"

namespace hvdrun::trainer {

namespace {

std::shared_ptr<ImageClassifier> BuildResNet18(const ModelInfo& /*info*/, int64_t /*image_size*/) {
  return MakeResNet(ResNet18Config());
}

std::shared_ptr<ImageClassifier> BuildResNet50(const ModelInfo& /*info*/, int64_t /*image_size*/) {
  return MakeResNet(ResNet50Config());
}

std::shared_ptr<ImageClassifier> BuildVgg16(const ModelInfo& /*info*/, int64_t /*image_size*/) {
  return MakeVgg(Vgg16Config());
}

std::shared_ptr<ImageClassifier> BuildFmnistCnn(const ModelInfo& info, int64_t image_size) {
  FmnistCnnConfig config;
  config.image_size = image_size;
  config.input_channels = info.input_channels;
  config.classes = info.classes;
  return MakeFmnistCnn(config);
}

}  // namespace

const std::vector<ModelInfo>& AllModels() {
  static const std::vector<ModelInfo> kModels = {
      {"resnet18", "ResNet-18 (torchvision), 3x224x224 images, 1000 classes", 3, 1000, 224, 32, false,
       BuildResNet18},
      {"resnet50", "ResNet-50 (torchvision), 3x224x224 images, 1000 classes", 3, 1000, 224, 32, false,
       BuildResNet50},
      {"vgg16", "VGG-16 (torchvision), 3x224x224 images, 1000 classes", 3, 1000, 224, 32, false, BuildVgg16},
      {"fmnist-cnn", "two conv+pool and two fully connected layers, 1x28x28 images, 10 classes", 1, 10, 28, 4,
       true, BuildFmnistCnn},
  };
  return kModels;
}

const ModelInfo* FindModel(std::string_view name) {
  for (const ModelInfo& info : AllModels()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::string ModelNames() {
  std::string names;
  for (const ModelInfo& info : AllModels()) names += (names.empty() ? "" : ", ") + info.name;
  return names;
}

std::shared_ptr<ImageClassifier> BuildModel(const ModelInfo& info, int64_t image_size) {
  return info.build(info, image_size);
}

}  // namespace hvdrun::trainer
