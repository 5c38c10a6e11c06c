#include "examples/trainer/training_progress.h"

#include <string>

namespace hvdrun::trainer {
namespace {

// Values before the rounds and epochs: the six counters and the two counts.
constexpr size_t kHeader = 8;
constexpr size_t kRoundValues = 5;
constexpr size_t kEpochValues = 5;

int64_t Whole(double value) { return static_cast<int64_t>(value); }

}  // namespace

std::vector<double> PackProgress(const TrainingProgress& p) {
  std::vector<double> packed = {static_cast<double>(p.epoch),
                                static_cast<double>(p.processed),
                                static_cast<double>(p.steps),
                                static_cast<double>(p.samples),
                                p.epoch_loss_sum,
                                p.reform_s,
                                static_cast<double>(p.rounds.size()),
                                static_cast<double>(p.epochs.size())};
  for (const RoundRecord& r : p.rounds) {
    packed.insert(packed.end(), {static_cast<double>(r.round), static_cast<double>(r.ranks),
                                 static_cast<double>(r.steps), static_cast<double>(r.samples), r.reform_s});
  }
  for (const EpochRecord& e : p.epochs) {
    packed.insert(packed.end(), {static_cast<double>(e.epoch), e.train_loss, e.test_accuracy,
                                 static_cast<double>(e.test_examples), e.seconds});
  }
  return packed;
}

StatusOr<TrainingProgress> UnpackProgress(const std::vector<double>& packed) {
  if (packed.size() < kHeader) {
    return Status::Error("training progress: " + std::to_string(packed.size()) + " values, fewer than " +
                         std::to_string(kHeader));
  }
  TrainingProgress p;
  p.epoch = static_cast<int>(packed[0]);
  p.processed = Whole(packed[1]);
  p.steps = Whole(packed[2]);
  p.samples = Whole(packed[3]);
  p.epoch_loss_sum = packed[4];
  p.reform_s = packed[5];
  const auto rounds = static_cast<size_t>(packed[6]);
  const auto epochs = static_cast<size_t>(packed[7]);
  if (packed.size() != kHeader + rounds * kRoundValues + epochs * kEpochValues) {
    return Status::Error("training progress: " + std::to_string(packed.size()) + " values for " +
                         std::to_string(rounds) + " rounds and " + std::to_string(epochs) + " epochs");
  }
  size_t at = kHeader;
  for (size_t i = 0; i < rounds; ++i, at += kRoundValues) {
    p.rounds.push_back({static_cast<int>(packed[at]), static_cast<int>(packed[at + 1]), Whole(packed[at + 2]),
                        Whole(packed[at + 3]), packed[at + 4]});
  }
  for (size_t i = 0; i < epochs; ++i, at += kEpochValues) {
    p.epochs.push_back({static_cast<int>(packed[at]), packed[at + 1], packed[at + 2], Whole(packed[at + 3]),
                        packed[at + 4]});
  }
  return p;
}

}  // namespace hvdrun::trainer
