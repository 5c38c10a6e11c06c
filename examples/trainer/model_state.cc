#include "examples/trainer/model_state.h"

#include <ATen/core/grad_mode.h>

#include <cstdint>
#include <cstdio>
#include <optional>

#include "examples/trainer/models/image_classifier.h"
#include "examples/trainer/tensor_data_type.h"

namespace hvdrun::trainer {

Status BroadcastModelState(ImageClassifier& model, DataParallelGroup& group) {
  Runtime* runtime = group.runtime();
  if (runtime == nullptr || group.size() == 1) return Status::Ok();
  at::NoGradGuard no_grad;
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& item : model.named_parameters()) {
    tensors.emplace_back(item.key(), item.value());
  }
  for (const auto& item : model.named_buffers()) {
    tensors.emplace_back(item.key(), item.value());
  }
  // A backend that reduces device memory (nccl) broadcasts the tensors where they are (it reads
  // each once the default stream has written it); the others from host memory.
  const bool device_memory = runtime->backend() == BackendKind::kNccl;
  for (auto& [name, tensor] : tensors) {
    std::optional<DataType> type = TensorDataType(tensor);
    if (!type) {
      return Status::Error("broadcast of the model: tensor '" + name + "' has a type libhvdrun lacks");
    }
    const at::Device staging = device_memory ? tensor.device() : at::Device(at::kCPU);
    const bool in_place = tensor.device() == staging && tensor.is_contiguous();
    at::Tensor buffer = in_place ? tensor : tensor.to(staging).contiguous();
    Status status =
        runtime->Broadcast(buffer.data_ptr(), static_cast<size_t>(buffer.numel()), *type, /*root=*/0);
    if (!status.ok()) {
      return Status::Error("broadcast of the model, tensor '" + name + "': " + status.message());
    }
    if (!in_place) tensor.copy_(buffer);
  }
  return Status::Ok();
}

std::string ParameterChecksum(ImageClassifier& model) {
  uint64_t hash = 14695981039346656037ULL;  // FNV-1a offset basis
  for (const at::Tensor& parameter : model.parameters()) {
    at::Tensor host = parameter.detach().to(at::kCPU).contiguous();
    const auto* bytes = static_cast<const unsigned char*>(host.data_ptr());
    const size_t size = static_cast<size_t>(host.numel()) * host.element_size();
    for (size_t i = 0; i < size; ++i) {
      hash ^= bytes[i];
      hash *= 1099511628211ULL;  // FNV prime
    }
  }
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx",
                static_cast<unsigned long long>(hash));  // NOLINT(google-runtime-int)
  return text;
}

}  // namespace hvdrun::trainer
