// TrainingResult: what a run measured on one rank, and the figures over the whole group that the
// report, the --json file and rank 0's last lines give.
#ifndef HVDRUN_EXAMPLES_TRAINER_TRAINING_RESULT_H_
#define HVDRUN_EXAMPLES_TRAINER_TRAINING_RESULT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "examples/trainer/data_parallel_group.h"
#include "examples/trainer/step_stats.h"
#include "hvdrun/status.h"

namespace hvdrun::trainer {

// One pass over the training set (data set runs); figures over the whole group.
struct EpochRecord {
  int epoch = 0;              // from 1
  double train_loss = 0;      // mean over every training example of the epoch, all ranks
  double test_accuracy = 0;   // fraction of the test set classified right, all ranks' shards together
  int64_t test_examples = 0;  // the test set's size
  double seconds = 0;         // rank 0's wall-clock time for the epoch, evaluation included
};

// One round of an elastic run (--elastic): what the job trained in it and committed, and how long
// joining it took. Work done after a round's last commit is lost with the round and not counted.
struct RoundRecord {
  int round = 0;        // libhvdrun's round number (hvdrun's)
  int ranks = 0;        // the round's size
  int64_t steps = 0;    // committed steps trained in the round
  int64_t samples = 0;  // committed training examples of those steps, all ranks together
  double reform_s = 0;  // rank 0's time from the failure it saw (or the new hosts' notice) to the
                        // round's synchronized state; 0 for the first round
};

// Figures of every rank together, the same on each rank (GroupFigures computes them).
struct GroupFigures {
  double step_time_s = 0;           // mean over ranks of each rank's mean step time
  double img_per_sec_per_rank = 0;  // mean over ranks of each rank's images/s
  double img_per_sec_total = 0;     // sum over ranks of each rank's images/s
  double comm_wait_s = 0;           // mean over ranks of each rank's mean wait per step
};

struct TrainingResult {
  std::vector<StepRecord> steps;  // the timed steps of this rank (synthetic: after the warm-up)
  std::vector<EpochRecord> epochs;
  int64_t bytes_reduced_per_step = 0;
  // What gradient compression sent (libhvdrun's counters); zeros without compression.
  CompressionCounters compression;
  int64_t bytes_reduced = 0;      // this rank's whole run, warm-up included
  int64_t steps_run = 0;          // this rank's whole run, warm-up included
  int overlapped_reductions = 0;  // in the last step: reductions started while backward ran
  int parameter_tensors = 0;
  std::optional<double> test_accuracy;  // the last epoch's; none for synthetic runs
  double wall_s = 0;                    // this rank's training time, from the first step to the end
  std::string parameter_checksum;       // ParameterChecksum after the last step
  GroupFigures group;
  // --elastic: training examples the final model was trained on, each counted once, and every round.
  int64_t samples_trained = 0;
  std::vector<RoundRecord> rounds;
};

// Fills result.group from every rank's steps (one collective: every rank calls it).
Status ComputeGroupFigures(DataParallelGroup& group, TrainingResult& result);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_TRAINING_RESULT_H_
