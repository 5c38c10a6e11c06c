// Synthetic runs, as Horovod's pytorch_synthetic_benchmark.py: one batch of random images and
// labels made once per rank, trained on for --warmup-steps untimed and --steps timed steps; rank 0
// prints each timed step and the images/s per rank and in total.
#ifndef HVDRUN_EXAMPLES_TRAINER_SYNTHETIC_BENCHMARK_H_
#define HVDRUN_EXAMPLES_TRAINER_SYNTHETIC_BENCHMARK_H_

#include <c10/core/Device.h>

#include <cstdio>

#include "examples/trainer/data_parallel_group.h"
#include "examples/trainer/trainer_options.h"
#include "examples/trainer/training_result.h"
#include "examples/trainer/training_step.h"
#include "hvdrun/status.h"

namespace hvdrun::trainer {

// Runs the steps of `options` on `model` (on `device`) through `step`. `progress`: where a line
// per timed step goes (rank 0's stdout), or null. Fills steps, steps_run and wall_s; an error is a
// failed gradient average.
StatusOr<TrainingResult> RunSyntheticBenchmark(const TrainerOptions& options, ImageClassifier& model,
                                               TrainingStep& step, c10::Device device, std::FILE* progress);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_SYNTHETIC_BENCHMARK_H_
