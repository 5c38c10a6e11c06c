#include "examples/trainer/dataset_training.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/randperm.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "examples/trainer/models/image_classifier.h"

namespace hvdrun::trainer {
namespace {

// Test images per forward pass: large batches evaluate faster, and memory is no concern at 28×28.
constexpr int64_t kEvaluationBatch = 1000;

}  // namespace

double CosineLearningRate(double lr, double done, double total) {
  return 0.5 * lr * (1 + std::cos(M_PI * done / total));
}

int64_t CountCorrect(ImageClassifier& model, const MnistSplit& split, c10::Device device) {
  at::NoGradGuard no_grad;
  model.train(/*on=*/false);
  int64_t correct = 0;
  for (int64_t begin = 0; begin < split.size(); begin += kEvaluationBatch) {
    const int64_t end = std::min(split.size(), begin + kEvaluationBatch);
    at::Tensor scores = model.forward(split.images.slice(0, begin, end).to(device));
    at::Tensor labels = split.labels.slice(0, begin, end).to(device);
    correct += scores.argmax(1).eq(labels).sum().item<int64_t>();
  }
  model.train(/*on=*/true);
  return correct;
}

StatusOr<TrainingResult> RunDatasetTraining(const TrainerOptions& options, DataParallelGroup& group,
                                            ImageClassifier& model, TrainingStep& step, double lr,
                                            const MnistDataset& dataset, c10::Device device,
                                            std::FILE* progress) {
  const MnistSplit train = ShardSplit(dataset.train, group.rank(), group.size(), /*equal_shares=*/true);
  const MnistSplit test = ShardSplit(dataset.test, group.rank(), group.size(), /*equal_shares=*/false);
  const int64_t examples = train.size();
  const int64_t steps_per_epoch = (examples + options.batch_size - 1) / options.batch_size;
  TrainingResult result;
  model.train(/*on=*/true);
  const auto start = std::chrono::steady_clock::now();
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    const auto epoch_start = std::chrono::steady_clock::now();
    at::Tensor order = at::randperm(examples, at::kLong);
    double loss_sum = 0;
    for (int64_t s = 0; s < steps_per_epoch; ++s) {
      step.SetLearningRate(CosineLearningRate(lr, static_cast<double>((epoch - 1) * steps_per_epoch + s),
                                              static_cast<double>(options.epochs * steps_per_epoch)));
      at::Tensor batch =
          order.slice(0, s * options.batch_size, std::min(examples, (s + 1) * options.batch_size));
      StatusOr<StepRecord> record = step.Run(train.images.index_select(0, batch).to(device),
                                             train.labels.index_select(0, batch).to(device));
      if (!record.ok()) return record.status();
      loss_sum += record->loss * static_cast<double>(record->images);
      result.steps.push_back(record.value());
      ++result.steps_run;
    }
    std::vector<double> sums = {loss_sum, static_cast<double>(examples),
                                static_cast<double>(CountCorrect(model, test, device)),
                                static_cast<double>(test.size())};
    if (Status status = group.SumAcrossRanks(sums); !status.ok()) return status;
    EpochRecord record;
    record.epoch = epoch;
    record.train_loss = sums[0] / sums[1];
    record.test_accuracy = sums[2] / sums[3];
    record.test_examples = static_cast<int64_t>(sums[3]);
    record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start).count();
    result.epochs.push_back(record);
    result.test_accuracy = record.test_accuracy;
    if (progress != nullptr) {
      std::fprintf(
          progress,
          "epoch %d/%d: train loss %.4f, test accuracy %.4f (%lld test images), %.1f s, %.0f img/s on %d "
          "rank%s\n",
          epoch, options.epochs, record.train_loss, record.test_accuracy,
          static_cast<long long>(record.test_examples), record.seconds,  // NOLINT(google-runtime-int)
          sums[1] / record.seconds, group.size(), group.size() == 1 ? "" : "s");
      std::fflush(progress);
    }
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace hvdrun::trainer
