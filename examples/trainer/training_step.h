// TrainingStep: one synchronous data-parallel SGD step on a rank — forward, loss, backward with the
// gradients averaged over the group as they are produced (GradientReducer), the optimizer's update
// — timed as StepRecord reports it.
//
// Every rank of the group must run the same number of steps (each step is a collective). Not
// thread-safe. The model must outlive the TrainingStep.
#ifndef HVDRUN_EXAMPLES_TRAINER_TRAINING_STEP_H_
#define HVDRUN_EXAMPLES_TRAINER_TRAINING_STEP_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "examples/trainer/data_parallel_group.h"
#include "examples/trainer/step_stats.h"
#include "hvdrun/status.h"

namespace torch::optim {
class SGD;
}  // namespace torch::optim

namespace hvdrun::trainer {

class GradientReducer;
class ImageClassifier;

struct OptimizerSettings {
  double lr = 0.01;  // already scaled for the group's size, where that is wanted
  double momentum = 0.9;
};

class TrainingStep {
 public:
  // `buffers_on_device`: see GradientReducer.
  TrainingStep(ImageClassifier& model, DataParallelGroup& group, const OptimizerSettings& settings,
               bool buffers_on_device);
  ~TrainingStep();
  TrainingStep(const TrainingStep&) = delete;
  TrainingStep& operator=(const TrainingStep&) = delete;

  // Trains on one batch: `images` [N, C, H, W] and `labels` [N] (int64 class indices), on the
  // model's device. Cross-entropy loss. A rank without examples in a step (N = 0: an elastic round
  // with fewer examples left than ranks) adds zero gradients to the average. A failed gradient average is
  // returned as an error; torch's own failures (a shape that does not fit) are thrown as c10::Error.
  StatusOr<StepRecord> Run(const at::Tensor& images, const at::Tensor& labels);

  // SGD's momentum buffer of each parameter, in the model's order; undefined where the optimizer
  // has none yet (before the first step). The tensors themselves, not copies.
  std::vector<at::Tensor> MomentumBuffers() const;
  // Makes `buffers` (as MomentumBuffers gives them; undefined: none) the optimizer's momentum.
  void SetMomentumBuffers(const std::vector<at::Tensor>& buffers);

  // The learning rate of the following steps.
  void SetLearningRate(double lr);

  // Bytes of gradients each step averages.
  int64_t bytes_reduced_per_step() const;
  // Parameters whose averaging started while backward still ran, in the last step.
  int overlapped_reductions() const;

 private:
  ImageClassifier& model_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
  std::unique_ptr<GradientReducer> reducer_;
};

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_TRAINING_STEP_H_
