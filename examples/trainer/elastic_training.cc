#include "examples/trainer/elastic_training.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/randperm.h>
#include <ATen/ops/tensor.h>

#include <string>
#include <utility>
#include <vector>

#include "examples/trainer/dataset_training.h"
#include "examples/trainer/epoch_plan.h"
#include "examples/trainer/models/image_classifier.h"

namespace hvdrun::trainer {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The order of epoch `epoch`'s `examples`: the same on every rank and in every round.
at::Tensor EpochOrder(int64_t examples, uint64_t seed, int epoch) {
  at::Generator generator = at::detail::createCPUGenerator(seed * 1'000'003 + static_cast<uint64_t>(epoch));
  return at::randperm(examples, generator, at::kLong);
}

}  // namespace

ElasticTraining::ElasticTraining(const TrainerOptions& options, ImageClassifier& model,
                                 const MnistDataset& dataset, GroupFactory join)
    : options_(options), model_(model), dataset_(dataset), join_(std::move(join)) {}

ElasticTraining::~ElasticTraining() {
  step_.reset();  // its gradient reducer uses the group's runtime
  group_.reset();
}

Status ElasticTraining::Join() {
  StatusOr<std::unique_ptr<DataParallelGroup>> joined = join_();
  if (!joined.ok()) return joined.status();
  group_ = std::move(joined).value();
  const double lr = options_.lr * (options_.scale_lr ? group_->size() : 1);
  step_ = std::make_unique<TrainingStep>(model_, *group_, OptimizerSettings{lr, options_.momentum},
                                         /*buffers_on_device=*/false);
  state_.Restore(model_, *step_);
  uncommitted_loss_ = 0;
  result_.steps.resize(committed_timed_steps_);
  return Status::Ok();
}

std::FILE* ElasticTraining::Out() const { return group_->rank() == 0 ? progress_ : nullptr; }

double ElasticTraining::LearningRate() const {
  const auto examples = static_cast<double>(dataset_.train.size());
  const double done = (state_.progress.epoch - 1) * examples + static_cast<double>(state_.progress.processed);
  const double lr = options_.lr * (options_.scale_lr ? group_->size() : 1);
  return CosineLearningRate(lr, done, options_.epochs * examples);
}

StatusOr<TrainingResult> ElasticTraining::Run(std::FILE* progress) {
  progress_ = progress;
  const Clock::time_point start = Clock::now();
  for (;;) {
    if (!group_) {
      if (Status joined = Join(); !joined.ok()) return joined;
    }
    StatusOr<RoundEnd> end = TrainRound();
    if (end.ok() && end.value() == RoundEnd::kTrained) break;
    if (!end.ok() && KindOf(end.status()) != ErrorKind::kRecoverable) return end.status();
    LeaveRound(end.ok() ? Status::Ok() : end.status());
  }
  const TrainingProgress& p = state_.progress;
  result_.epochs = p.epochs;
  if (!p.epochs.empty()) result_.test_accuracy = p.epochs.back().test_accuracy;
  result_.steps_run = p.steps;
  result_.samples_trained = p.samples;
  result_.rounds = p.rounds;
  result_.wall_s = SecondsSince(start);
  return result_;
}

// After a failure the state goes back to the last commit (at the next Join); after new hosts it is
// the commit just made. Either way the round's runtime is destroyed before the next is created.
void ElasticTraining::LeaveRound(const Status& why) {
  left_at_ = Clock::now();
  const int round = group_->runtime() != nullptr ? group_->runtime()->round() : 0;
  std::fprintf(stderr, "hvdrun-trainer: rank %d: round %d ended (%s); going on from step %lld\n",
               group_->rank(), round, why.ok() ? "hvdrun found new hosts" : why.message().c_str(),
               static_cast<long long>(state_.last_commit().steps));  // NOLINT(google-runtime-int)
  std::fflush(stderr);
  step_.reset();
  group_.reset();
}

Status ElasticTraining::BeginRound() {
  state_.progress.reform_s = left_at_ ? SecondsSince(*left_at_) : 0;
  if (Status synced = state_.Sync(model_, *step_, *group_); !synced.ok()) return synced;
  TrainingProgress& p = state_.progress;
  RoundRecord round;
  round.round = group_->runtime() != nullptr ? group_->runtime()->round() : 0;
  round.ranks = group_->size();
  round.reform_s = p.reform_s;
  p.rounds.push_back(round);
  state_.Commit(model_, *step_);
  committed_timed_steps_ = result_.steps.size();
  epoch_start_ = Clock::now();
  if (std::FILE* out = Out(); out != nullptr && p.rounds.size() > 1) {
    std::fprintf(
        out, "round %d: %d rank%s, from epoch %d, example %lld of %lld, step %lld (re-formed in %.2f s)\n",
        round.round, round.ranks, round.ranks == 1 ? "" : "s", p.epoch,
        static_cast<long long>(p.processed),               // NOLINT(google-runtime-int)
        static_cast<long long>(dataset_.train.size()),     // NOLINT(google-runtime-int)
        static_cast<long long>(p.steps), round.reform_s);  // NOLINT(google-runtime-int)
    std::fflush(out);
  }
  return Status::Ok();
}

StatusOr<ElasticTraining::RoundEnd> ElasticTraining::TrainRound() {
  if (Status begun = BeginRound(); !begun.ok()) return begun;
  while (state_.progress.epoch <= options_.epochs) {
    StatusOr<bool> updated = TrainRestOfEpoch();
    if (!updated.ok()) return updated.status();
    if (updated.value()) return RoundEnd::kHostsUpdated;
    updated = FinishEpoch();
    if (!updated.ok()) return updated.status();
    if (updated.value()) return RoundEnd::kHostsUpdated;
  }
  return RoundEnd::kTrained;
}

StatusOr<bool> ElasticTraining::TrainRestOfEpoch() {
  const MnistSplit& train = dataset_.train;
  TrainingProgress& p = state_.progress;
  const at::Tensor order = EpochOrder(train.size(), options_.seed, p.epoch);
  int since_commit = 0;
  for (const StepSlice& slice :
       PlanRemainingSteps(train.size(), p.processed, group_->size(), options_.batch_size)) {
    step_->SetLearningRate(LearningRate());
    const std::vector<int64_t> positions = RankPositions(slice, group_->rank(), group_->size());
    const at::Tensor batch = order.index_select(0, at::tensor(positions, at::kLong));
    StatusOr<StepRecord> record =
        step_->Run(train.images.index_select(0, batch), train.labels.index_select(0, batch));
    if (!record.ok()) return record.status();
    uncommitted_loss_ += record->loss * static_cast<double>(record->images);
    result_.steps.push_back(record.value());
    p.processed = slice.end;
    ++p.steps;
    p.samples += slice.size();
    ++p.rounds.back().steps;
    p.rounds.back().samples += slice.size();
    if (++since_commit == options_.commit_every || slice.end == train.size()) {
      since_commit = 0;
      StatusOr<bool> updated = Commit();
      if (!updated.ok() || updated.value()) return updated;
    }
  }
  return false;
}

StatusOr<bool> ElasticTraining::Commit() {
  const bool root = group_->rank() == 0;
  StatusOr<bool> hosts_updated = false;
  if (root && group_->runtime() != nullptr) hosts_updated = group_->runtime()->HostsUpdated();
  if (!hosts_updated.ok()) return hosts_updated.status();
  std::vector<double> sums = {uncommitted_loss_, hosts_updated.value() ? 1.0 : 0.0};
  if (Status status = group_->SumAcrossRanks(sums); !status.ok()) return status;
  state_.progress.epoch_loss_sum += sums[0];
  uncommitted_loss_ = 0;
  state_.Commit(model_, *step_);
  committed_timed_steps_ = result_.steps.size();
  return sums[1] > 0;
}

StatusOr<bool> ElasticTraining::FinishEpoch() {
  TrainingProgress& p = state_.progress;
  const MnistSplit test = ShardSplit(dataset_.test, group_->rank(), group_->size(), /*equal_shares=*/false);
  std::vector<double> sums = {static_cast<double>(CountCorrect(model_, test, at::Device(at::kCPU))),
                              static_cast<double>(test.size())};
  if (Status status = group_->SumAcrossRanks(sums); !status.ok()) return status;
  EpochRecord record;
  record.epoch = p.epoch;
  record.train_loss = p.epoch_loss_sum / static_cast<double>(dataset_.train.size());
  record.test_accuracy = sums[0] / sums[1];
  record.test_examples = static_cast<int64_t>(sums[1]);
  record.seconds = SecondsSince(epoch_start_);
  if (std::FILE* out = Out(); out != nullptr) {
    std::fprintf(out,
                 "epoch %d/%d: train loss %.4f, test accuracy %.4f (%lld test images), %.1f s, %d rank%s\n",
                 p.epoch, options_.epochs, record.train_loss, record.test_accuracy,
                 static_cast<long long>(record.test_examples),  // NOLINT(google-runtime-int)
                 record.seconds, group_->size(), group_->size() == 1 ? "" : "s");
    std::fflush(out);
  }
  p.epochs.push_back(record);
  ++p.epoch;
  p.processed = 0;
  p.epoch_loss_sum = 0;
  epoch_start_ = Clock::now();
  return Commit();
}

}  // namespace hvdrun::trainer
