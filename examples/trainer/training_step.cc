#include "examples/trainer/training_step.h"

#include <torch/optim/sgd.h>

#include <chrono>

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
  at::Tensor loss = at::nll_loss(at::log_softmax(model_.forward(images), /*dim=*/1), labels);
  loss.backward();
  if (Status status = reducer_->FinishStep(); !status.ok()) return status;
  optimizer_->step();
  StepRecord record;
  record.loss = loss.item<double>();  // also waits for a device to finish the step
  record.step_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  record.comm_wait_s = reducer_->last_wait().count();
  record.compute_s = record.step_s - record.comm_wait_s;
  record.comm_overlapped_s = reducer_->last_overlap().count();
  record.images = images.size(0);
  return record;
}

void TrainingStep::SetLearningRate(double lr) {
  for (torch::optim::OptimizerParamGroup& group : optimizer_->param_groups()) group.options().set_lr(lr);
}

int64_t TrainingStep::bytes_reduced_per_step() const { return reducer_->bytes_per_step(); }

int TrainingStep::overlapped_reductions() const { return reducer_->started_during_backward(); }

}  // namespace hvdrun::trainer
