// ElasticTraining: hvdrun-trainer --elastic, training on an MNIST-format data set through the
// rounds of an elastic job (hvdrun --min-np; docs/elastic.md), as hvdrun.torch's elastic.run does.
//
// Every round begins by giving every rank rank 0's state (ElasticState::Sync) and committing it.
// Each epoch's examples are taken in one order, the same on every rank, and split into steps and
// among the round's ranks from the committed position on (epoch_plan.h), so that each example of
// an epoch is trained once. The state is committed every options.commit_every steps and at the
// end of each epoch; at a commit rank 0 also asks whether hvdrun found new hosts, and tells the
// others (one allreduce). When a collective fails with ErrorKind::kRecoverable the rank goes back
// to its last commit; then, or after new hosts, it destroys its runtime and joins the next round.
// The progress counts committed work only: what a lost round trained after its last commit is
// trained again, and counted once.
//
// Not thread-safe.
#ifndef HVDRUN_EXAMPLES_TRAINER_ELASTIC_TRAINING_H_
#define HVDRUN_EXAMPLES_TRAINER_ELASTIC_TRAINING_H_

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>

#include "examples/trainer/data_parallel_group.h"
#include "examples/trainer/elastic_state.h"
#include "examples/trainer/mnist_dataset.h"
#include "examples/trainer/trainer_options.h"
#include "examples/trainer/training_result.h"
#include "examples/trainer/training_step.h"
#include "hvdrun/status.h"

namespace hvdrun::trainer {

class ImageClassifier;

class ElasticTraining {
 public:
  // Creates this rank's group anew for each round (DataParallelGroup::FromEnvironment): its error
  // is returned as it is, ErrorKind::kRemoved included (the worker has no place in the round).
  using GroupFactory = std::function<StatusOr<std::unique_ptr<DataParallelGroup>>()>;

  // `model` (on the CPU) and `dataset` must outlive the object.
  ElasticTraining(const TrainerOptions& options, ImageClassifier& model, const MnistDataset& dataset,
                  GroupFactory join);
  ~ElasticTraining();
  ElasticTraining(const ElasticTraining&) = delete;
  ElasticTraining& operator=(const ElasticTraining&) = delete;

  // Joins a round: the first one before Run, so that the program can check and describe its group.
  Status Join();
  // The group and step of the round joined last (after Join).
  DataParallelGroup& group() { return *group_; }
  TrainingStep& step() { return *step_; }

  // Trains every epoch, through as many rounds as it takes. Rank 0 of each round prints its lines
  // to `progress` (null: none). Fills steps, epochs, test_accuracy, steps_run, wall_s,
  // samples_trained and rounds. An error is one that is not recoverable, or Join's.
  StatusOr<TrainingResult> Run(std::FILE* progress);

 private:
  enum class RoundEnd { kTrained, kHostsUpdated };

  StatusOr<RoundEnd> TrainRound();
  Status BeginRound();
  // Trains the rest of the current epoch; true when a commit found new hosts.
  StatusOr<bool> TrainRestOfEpoch();
  // Evaluates the finished epoch, records it and commits the next one's start; true as Commit.
  StatusOr<bool> FinishEpoch();
  // Adds the uncommitted loss of every rank and asks rank 0 about new hosts (one allreduce), then
  // commits; true when hvdrun has found new hosts.
  StatusOr<bool> Commit();
  void LeaveRound(const Status& why);
  double LearningRate() const;
  std::FILE* Out() const;

  const TrainerOptions& options_;
  ImageClassifier& model_;
  const MnistDataset& dataset_;
  GroupFactory join_;
  std::unique_ptr<DataParallelGroup> group_;
  std::unique_ptr<TrainingStep> step_;
  ElasticState state_;
  TrainingResult result_;
  size_t committed_timed_steps_ = 0;  // result_.steps at the last commit
  double uncommitted_loss_ = 0;       // this rank's loss over its examples since the last commit
  std::optional<std::chrono::steady_clock::time_point> left_at_;  // when the last round ended
  std::chrono::steady_clock::time_point epoch_start_;
  std::FILE* progress_ = nullptr;
};

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_ELASTIC_TRAINING_H_
