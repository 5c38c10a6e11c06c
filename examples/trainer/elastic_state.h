// ElasticState: what an elastic run (--elastic) commits in memory and goes back to when a round
// fails: the model's parameters and buffers, SGD's momentum buffers and the TrainingProgress, as
// Horovod's TorchState keeps its model, optimizer and values. A round begins with Sync, which
// gives every rank rank 0's state (its commit, restored, or a new worker's nothing) and commits it.
//
// Tensors are on the CPU (--elastic trains there). Not thread-safe.
#ifndef HVDRUN_EXAMPLES_TRAINER_ELASTIC_STATE_H_
#define HVDRUN_EXAMPLES_TRAINER_ELASTIC_STATE_H_

#include <ATen/core/Tensor.h>

#include <vector>

#include "examples/trainer/data_parallel_group.h"
#include "examples/trainer/training_progress.h"
#include "hvdrun/status.h"

namespace hvdrun::trainer {

class ImageClassifier;
class TrainingStep;

class ElasticState {
 public:
  // The live progress, which training advances; Commit saves it with the model.
  TrainingProgress progress;

  // Saves copies of `model`'s parameters and buffers, `step`'s momentum buffers and `progress`.
  void Commit(ImageClassifier& model, const TrainingStep& step);
  // Puts the last commit back into `model`, `step` (a new one of a new round too) and `progress`;
  // nothing before the first commit.
  void Restore(ImageClassifier& model, TrainingStep& step);
  // Replaces this rank's progress, model and momentum by rank 0's (broadcasts; every rank of
  // `group` calls it), without committing. An error is the failed collective's.
  Status Sync(ImageClassifier& model, TrainingStep& step, DataParallelGroup& group);

  bool committed() const { return has_commit_; }
  const TrainingProgress& last_commit() const { return committed_; }

 private:
  bool has_commit_ = false;
  std::vector<at::Tensor> tensors_;   // the parameters, then the buffers
  std::vector<at::Tensor> momentum_;  // per parameter; undefined where none
  TrainingProgress committed_;
};

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_ELASTIC_STATE_H_
