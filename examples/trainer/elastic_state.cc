#include "examples/trainer/elastic_state.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/zeros_like.h>

#include <string>

#include "examples/trainer/model_state.h"
#include "examples/trainer/models/image_classifier.h"
#include "examples/trainer/training_step.h"

namespace hvdrun::trainer {
namespace {

// The model's parameters, then its buffers: the tensors themselves.
std::vector<at::Tensor> ModelTensors(ImageClassifier& model) {
  std::vector<at::Tensor> tensors = model.parameters();
  for (const auto& item : model.named_buffers()) tensors.push_back(item.value());
  return tensors;
}

// Rank 0's `values` on every rank; their count must be equal.
Status BroadcastDoubles(Runtime& runtime, std::vector<double>& values) {
  return runtime.Broadcast(values.data(), values.size(), DataType::kFloat64, /*root=*/0);
}

// Rank 0's momentum buffers on every rank: a rank without them makes zeros (laid out as the
// parameters, contiguous float32 on the CPU) to receive them in.
Status BroadcastMomentum(Runtime& runtime, ImageClassifier& model, TrainingStep& step,
                         bool root_has_momentum) {
  std::vector<at::Tensor> buffers = step.MomentumBuffers();
  if (!root_has_momentum) {
    step.SetMomentumBuffers(std::vector<at::Tensor>(buffers.size()));
    return Status::Ok();
  }
  const std::vector<at::Tensor> parameters = model.parameters();
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (!buffers[i].defined()) buffers[i] = at::zeros_like(parameters[i]);
  }
  step.SetMomentumBuffers(buffers);
  for (size_t i = 0; i < buffers.size(); ++i) {
    Status status = runtime.Broadcast(buffers[i].data_ptr(), static_cast<size_t>(buffers[i].numel()),
                                      DataType::kFloat32, /*root=*/0);
    if (!status.ok()) return Status::Error("momentum " + std::to_string(i) + ": " + status.message());
  }
  return Status::Ok();
}

}  // namespace

void ElasticState::Commit(ImageClassifier& model, const TrainingStep& step) {
  at::NoGradGuard no_grad;
  tensors_.clear();
  for (const at::Tensor& tensor : ModelTensors(model)) tensors_.push_back(tensor.detach().clone());
  momentum_.clear();
  for (const at::Tensor& buffer : step.MomentumBuffers()) {
    momentum_.push_back(buffer.defined() ? buffer.detach().clone() : at::Tensor());
  }
  committed_ = progress;
  has_commit_ = true;
}

void ElasticState::Restore(ImageClassifier& model, TrainingStep& step) {
  if (!has_commit_) return;
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> tensors = ModelTensors(model);
  for (size_t i = 0; i < tensors.size() && i < tensors_.size(); ++i) tensors[i].copy_(tensors_[i]);
  std::vector<at::Tensor> momentum;
  for (const at::Tensor& buffer : momentum_) {
    momentum.push_back(buffer.defined() ? buffer.clone() : at::Tensor());
  }
  step.SetMomentumBuffers(momentum);
  progress = committed_;
}

Status ElasticState::Sync(ImageClassifier& model, TrainingStep& step, DataParallelGroup& group) {
  Runtime* runtime = group.runtime();
  if (runtime == nullptr || group.size() == 1) return Status::Ok();
  std::vector<double> packed = PackProgress(progress);
  bool has_momentum = false;
  for (const at::Tensor& buffer : step.MomentumBuffers()) has_momentum = has_momentum || buffer.defined();
  std::vector<double> header = {static_cast<double>(packed.size()), has_momentum ? 1.0 : 0.0};
  if (Status status = BroadcastDoubles(*runtime, header); !status.ok()) {
    return Status::Error("synchronizing the state: " + status.message());
  }
  packed.resize(static_cast<size_t>(header[0]));
  if (Status status = BroadcastDoubles(*runtime, packed); !status.ok()) {
    return Status::Error("synchronizing the state: " + status.message());
  }
  StatusOr<TrainingProgress> root = UnpackProgress(packed);
  if (!root.ok()) return root.status();
  if (Status status = BroadcastModelState(model, group); !status.ok()) return status;
  if (Status status = BroadcastMomentum(*runtime, model, step, header[1] > 0); !status.ok()) {
    return Status::Error("synchronizing the state: " + status.message());
  }
  progress = std::move(root).value();
  return Status::Ok();
}

}  // namespace hvdrun::trainer
