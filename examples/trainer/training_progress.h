// TrainingProgress: where an elastic run (--elastic) stands, the counters it commits beside the
// model and optimizer: the epoch, the examples of its order trained (a prefix, epoch_plan.h), the
// job's steps and samples, the epoch's loss so far, every round and every finished epoch. Rank 0's
// progress is given to every rank when a round begins, as a vector of float64 (every count fits:
// below 2^53), which PackProgress and UnpackProgress make and read.
#ifndef HVDRUN_EXAMPLES_TRAINER_TRAINING_PROGRESS_H_
#define HVDRUN_EXAMPLES_TRAINER_TRAINING_PROGRESS_H_

#include <cstdint>
#include <vector>

#include "examples/trainer/training_result.h"
#include "hvdrun/status.h"

namespace hvdrun::trainer {

struct TrainingProgress {
  int epoch = 1;              // the epoch in training, from 1; past the last when training is done
  int64_t processed = 0;      // positions of the epoch's order trained, by every rank together
  int64_t steps = 0;          // steps of the whole run
  int64_t samples = 0;        // training examples of the whole run, each once
  double epoch_loss_sum = 0;  // the epoch's loss summed over its examples trained (all ranks)
  double reform_s = 0;        // the re-formation time of the round being joined (rank 0's)
  std::vector<RoundRecord> rounds;
  std::vector<EpochRecord> epochs;
};

std::vector<double> PackProgress(const TrainingProgress& progress);

// The progress that PackProgress packed; an error names what does not fit (a short or long vector).
StatusOr<TrainingProgress> UnpackProgress(const std::vector<double>& packed);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_TRAINING_PROGRESS_H_
