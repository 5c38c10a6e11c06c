// Training on an MNIST-format data set: each rank trains on its own shard of the training set
// (ShardSplit, equal shares, so every rank runs the same steps), in an order shuffled anew each
// epoch, with the learning rate annealed along a cosine; after each epoch every rank evaluates its shard of
// the test set and the group adds up the counts, so the accuracy is the whole test set's. Rank 0 prints a
// line per epoch.
#ifndef HVDRUN_EXAMPLES_TRAINER_DATASET_TRAINING_H_
#define HVDRUN_EXAMPLES_TRAINER_DATASET_TRAINING_H_

#include <c10/core/Device.h>

#include <cstdio>

#include "examples/trainer/data_parallel_group.h"
#include "examples/trainer/mnist_dataset.h"
#include "examples/trainer/trainer_options.h"
#include "examples/trainer/training_result.h"
#include "examples/trainer/training_step.h"
#include "hvdrun/status.h"

namespace hvdrun::trainer {

// The learning rate after `done` of the run's `total` (steps, or examples): cosine annealing
// from `lr` towards 0 (Loshchilov & Hutter), which ends training on small steps and makes the last
// epoch's accuracy steady rather than dependent on where the last large step happened to land.
double CosineLearningRate(double lr, double done, double total);

// Correctly classified examples of `split` (on the CPU) by `model` (on `device`), in evaluation mode.
int64_t CountCorrect(ImageClassifier& model, const MnistSplit& split, c10::Device device);

// Trains `model` (on `device`) for options.epochs epochs with batches of options.batch_size, the
// learning rate falling from `lr` towards 0 along a cosine over the run's steps.
// Every rank of `group` calls it with the same data set, which must hold at least group.size()
// training examples. Fills steps, epochs, test_accuracy, steps_run and wall_s; an error is a failed
// collective.
StatusOr<TrainingResult> RunDatasetTraining(const TrainerOptions& options, DataParallelGroup& group,
                                            ImageClassifier& model, TrainingStep& step, double lr,
                                            const MnistDataset& dataset, c10::Device device,
                                            std::FILE* progress);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_DATASET_TRAINING_H_
