#include "examples/trainer/training_step.h"

#include <torch/optim/sgd.h>

#include <chrono>
#include <string>

#include "examples/trainer/gradient_reducer.h"
#include "examples/trainer/models/image_classifier.h"

namespace hvdrun::trainer {

TrainingStep::TrainingStep(ImageClassifier& model, DataParallelGroup& group,
                           const OptimizerSettings& settings, bool buffers_on_device)
    : model_(model),
      optimizer_(std::make_unique<torch::optim::SGD>(
          model.parameters(), torch::optim::SGDOptions(settings.lr).momentum(settings.momentum))),
      reducer_(std::make_unique<GradientReducer>(group.runtime(), model.parameters(), buffers_on_device)) {}

TrainingStep::~TrainingStep() = default;

StatusOr<StepRecord> TrainingStep::Run(const at::Tensor& images, const at::Tensor& labels) {
  const auto start = std::chrono::steady_clock::now();
  optimizer_->zero_grad();
  at::Tensor loss;
  if (images.size(0) > 0) {
    loss = at::nll_loss(at::log_softmax(model_.forward(images), /*dim=*/1), labels);
    loss.backward();
  }
  if (Status status = reducer_->FinishStep(); !status.ok()) return status;
  optimizer_->step();
  StepRecord record;
  record.loss = loss.defined() ? loss.item<double>() : 0;  // also waits for a device to finish the step
  record.step_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  record.comm_wait_s = reducer_->last_wait().count();
  record.compute_s = record.step_s - record.comm_wait_s;
  record.comm_overlapped_s = reducer_->last_overlap().count();
  record.images = images.size(0);
  return record;
}

namespace {

// The key of `parameter`'s state in a libtorch 1.13 optimizer.
std::string StateKey(const at::Tensor& parameter) {
  return c10::guts::to_string(parameter.unsafeGetTensorImpl());
}

}  // namespace

std::vector<at::Tensor> TrainingStep::MomentumBuffers() const {
  std::vector<at::Tensor> buffers;
  for (const at::Tensor& parameter : model_.parameters()) {
    auto found = optimizer_->state().find(StateKey(parameter));
    buffers.push_back(found == optimizer_->state().end()
                          ? at::Tensor()
                          : static_cast<torch::optim::SGDParamState&>(*found->second).momentum_buffer());
  }
  return buffers;
}

void TrainingStep::SetMomentumBuffers(const std::vector<at::Tensor>& buffers) {
  const std::vector<at::Tensor> parameters = model_.parameters();
  for (size_t i = 0; i < parameters.size() && i < buffers.size(); ++i) {
    const std::string key = StateKey(parameters[i]);
    if (!buffers[i].defined()) {
      optimizer_->state().erase(key);
      continue;
    }
    auto state = std::make_unique<torch::optim::SGDParamState>();
    state->momentum_buffer(buffers[i]);
    optimizer_->state()[key] = std::move(state);
  }
}

void TrainingStep::SetLearningRate(double lr) {
  for (torch::optim::OptimizerParamGroup& group : optimizer_->param_groups()) group.options().set_lr(lr);
}

int64_t TrainingStep::bytes_reduced_per_step() const { return reducer_->bytes_per_step(); }

int TrainingStep::overlapped_reductions() const { return reducer_->started_during_backward(); }

}  // namespace hvdrun::trainer
