#include "examples/trainer/model_description.h"

#include <cstdio>

#include "examples/trainer/models/image_classifier.h"

namespace hvdrun::trainer {
namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// 4089184256 -> "4.09 G".
std::string Scaled(double value) {
  const char* units[] = {"", " k", " M", " G", " T"};
  size_t unit = 0;
  while (value >= 1000 && unit + 1 < std::size(units)) {
    value /= 1000;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f%s", value, units[unit]);
  return text;
}

}  // namespace

ModelDescription DescribeModel(const ModelInfo& info, ImageClassifier& model, int64_t image_size) {
  ModelDescription description;
  description.model = info.name;
  description.image_size = image_size;
  description.input_channels = info.input_channels;
  for (const auto& item : model.named_parameters()) {
    TensorDescription tensor;
    tensor.name = item.key();
    tensor.shape = item.value().sizes().vec();
    tensor.elements = item.value().numel();
    description.parameter_count += tensor.elements;
    description.parameters.push_back(std::move(tensor));
  }
  description.buffer_tensors = static_cast<int64_t>(model.named_buffers().size());
  description.multiply_accumulates = model.MultiplyAccumulates(image_size);
  return description;
}

std::string FormatModelDescription(const ModelDescription& d) {
  std::string out = d.model + ": parameter tensors in registration order (named_parameters())\n";
  char line[256];
  std::snprintf(line, sizeof(line), "  %4s  %-40s %-22s %14s\n", "#", "NAME", "SHAPE", "ELEMENTS");
  out += line;
  for (size_t i = 0; i < d.parameters.size(); ++i) {
    const TensorDescription& t = d.parameters[i];
    std::snprintf(line, sizeof(line), "  %4zu  %-40s %-22s %14s\n", i, t.name.c_str(),
                  ShapeText(t.shape).c_str(), WithThousandsSeparators(t.elements).c_str());
    out += line;
  }
  out += d.model + ": " + std::to_string(d.parameters.size()) + " parameter tensors, " +
         WithThousandsSeparators(d.parameter_count) + " parameters (" +
         Scaled(static_cast<double>(d.parameter_count) * 4) + "B as float32); " +
         std::to_string(d.buffer_tensors) + " buffer tensors (not parameters)\n";
  std::string image = std::to_string(d.input_channels) + "x" + std::to_string(d.image_size) + "x" +
                      std::to_string(d.image_size);
  out += d.model + ": per " + image + " image, forward: " + WithThousandsSeparators(d.multiply_accumulates) +
         " multiply-accumulates (" + Scaled(static_cast<double>(d.multiply_accumulates)) + "MAC), " +
         Scaled(2.0 * static_cast<double>(d.multiply_accumulates)) +
         "FLOP; a training step (forward + backward) is about 3 times that\n";
  return out;
}

nlohmann::json ModelDescriptionToJson(const ModelDescription& d) {
  nlohmann::json parameters = nlohmann::json::array();
  for (const TensorDescription& t : d.parameters) {
    parameters.push_back({{"name", t.name}, {"shape", t.shape}, {"elements", t.elements}});
  }
  return {{"model", d.model},
          {"image_size", d.image_size},
          {"parameters", parameters},
          {"parameter_tensors", d.parameters.size()},
          {"parameter_count", d.parameter_count},
          {"buffer_tensors", d.buffer_tensors},
          {"macs_per_image", d.multiply_accumulates},
          {"flops_per_image", 2 * d.multiply_accumulates}};
}

std::string WithThousandsSeparators(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

}  // namespace hvdrun::trainer
