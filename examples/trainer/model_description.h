// What --describe prints: a model's parameter tensors (name, shape) in registration order, their
// count and total, and its multiply-accumulates per image. The list is what an allreduce of the
// model's gradients sends, tensor by tensor.
#ifndef HVDRUN_EXAMPLES_TRAINER_MODEL_DESCRIPTION_H_
#define HVDRUN_EXAMPLES_TRAINER_MODEL_DESCRIPTION_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "examples/trainer/models/model_catalog.h"

namespace hvdrun::trainer {

struct TensorDescription {
  std::string name;  // "layer1.0.conv1.weight"
  std::vector<int64_t> shape;
  int64_t elements = 0;
};

struct ModelDescription {
  std::string model;
  int64_t image_size = 0;
  int64_t input_channels = 0;
  std::vector<TensorDescription> parameters;
  int64_t parameter_count = 0;  // elements of all parameters
  // Tensors that are state but not parameters (BatchNorm running means, variances, batch counts):
  // broadcast at the start, never reduced.
  int64_t buffer_tensors = 0;
  int64_t multiply_accumulates = 0;  // per image, forward pass
};

ModelDescription DescribeModel(const ModelInfo& info, ImageClassifier& model, int64_t image_size);

// The table --describe prints, ending with the totals.
std::string FormatModelDescription(const ModelDescription& description);

// The same as JSON: model, image_size, parameters [{name, shape, elements}], parameter_tensors,
// parameter_count, buffer_tensors, macs_per_image, flops_per_image.
nlohmann::json ModelDescriptionToJson(const ModelDescription& description);

// 25557032 -> "25,557,032".
std::string WithThousandsSeparators(int64_t value);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_MODEL_DESCRIPTION_H_
