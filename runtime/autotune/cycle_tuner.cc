#include "runtime/autotune/cycle_tuner.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <utility>

#include "runtime/negotiation/fusion_plan.h"

namespace hvdrun {
namespace {

constexpr double kMib = 1024.0 * 1024.0;

TunedSetting StartingSetting(const NegotiationOptions& negotiation) {
  return {static_cast<double>(negotiation.fusion_threshold_bytes) / kMib,
          std::chrono::duration<double, std::milli>(negotiation.cycle_time).count()};
}

// Whether the job's allreduces are hierarchical, for the log (RuntimeOptions::hierarchical_allreduce
// says where they are).
bool HierarchicalAllreduceRuns(const RuntimeOptions& options) {
  return options.hierarchical_allreduce && options.shared_memory && options.backend == BackendKind::kGloo &&
         options.cross_size > 1 && options.local_size >= 2 &&
         options.size == options.local_size * options.cross_size;
}

// What rank 0 broadcasts at the end of a sample.
struct Switch {
  int64_t fusion_threshold_bytes = 0;
  int64_t cycle_time_us = 0;
  int64_t done = 0;
};

}  // namespace

std::unique_ptr<CycleTuner> CycleTuner::Create(const RuntimeOptions& options) {
  const AutotuneOptions& autotune = options.autotune;
  if (!autotune.enabled) return nullptr;
  if (autotune.fusion_threshold_fixed && autotune.cycle_time_fixed) {
    if (options.rank == 0) {
      const std::string line =
          "autotune: nothing to tune: HOROVOD_FUSION_THRESHOLD and HOROVOD_CYCLE_TIME are both set, and "
          "explicit values stay fixed";
      if (options.negotiation.warn) {
        options.negotiation.warn(line);
      } else {
        std::fprintf(stderr, "libhvdrun: %s\n", line.c_str());
      }
    }
    return nullptr;
  }
  return std::make_unique<CycleTuner>(options);
}

CycleTuner::CycleTuner(const RuntimeOptions& options)
    : rank_(options.rank),
      local_size_(options.local_size),
      hierarchical_allreduce_(HierarchicalAllreduceRuns(options)),
      cache_enabled_(options.negotiation.cache_capacity > 0),
      warn_(options.negotiation.warn),
      warmup_left_(options.autotune.warmup_samples),
      scorer_(options.autotune.steps_per_sample),
      search_(StartingSetting(options.negotiation), options.autotune.fusion_threshold_fixed,
              options.autotune.cycle_time_fixed, options.autotune.max_samples,
              options.autotune.gaussian_process_noise),
      log_(options.rank == 0 ? options.autotune.log_file : std::string()) {}

StatusOr<std::optional<CycleSettings>> CycleTuner::AfterCycle(Backend& control,
                                                              const std::vector<TensorRequest>& ran,
                                                              Clock::time_point end) {
  if (done_ || ran.empty()) return std::optional<CycleSettings>();
  std::vector<std::string> names;
  names.reserve(ran.size());
  uint64_t bytes = 0;
  for (const TensorRequest& request : ran) {
    names.push_back(request.name);
    bytes += request.bytes();
  }
  const std::optional<SampleScorer::Score> score = scorer_.Record(names, bytes, end);
  if (!score) return std::optional<CycleSettings>();
  if (warmup_left_ > 0) {
    --warmup_left_;
    return std::optional<CycleSettings>();
  }
  Switch message;
  if (rank_ == 0) {
    Score(*score);
    const TunedSetting next = search_.current();
    message.fusion_threshold_bytes = std::llround(next.fusion_threshold_mib * kMib);
    message.cycle_time_us = std::llround(next.cycle_time_ms * 1000);
    message.done = search_.done() ? 1 : 0;
  }
  static_assert(sizeof(Switch) == 3 * sizeof(int64_t));
  Status status = control.Broadcast(&message, 3, DataType::kInt64, 0);
  if (!status.ok()) {
    return Status::Error("autotune: broadcasting the next setting failed: " + status.message());
  }
  done_ = message.done != 0;
  CycleSettings settings;
  settings.cycle_time = std::chrono::microseconds(message.cycle_time_us);
  settings.fusion_threshold_bytes =
      EffectiveFusionThreshold(static_cast<size_t>(message.fusion_threshold_bytes), local_size_);
  return std::optional<CycleSettings>(settings);
}

void CycleTuner::Score(const SampleScorer::Score& score) {
  const TunedSetting measured = search_.current();
  steps_scored_ += score.steps;
  search_.Scored(score.bytes_per_second);
  Log(measured, score.bytes_per_second, score.spread, false);
  if (!search_.done()) return;
  Log(search_.best(), search_.best_score(), 0, true);
  summary_ = Summary();
  Warn(summary_);
}

void CycleTuner::Log(const TunedSetting& setting, double score, double spread, bool chosen) {
  if (log_failed_) return;
  AutotuneLog::Row row;
  row.hierarchical_allreduce = hierarchical_allreduce_;
  row.cache_enabled = cache_enabled_;
  row.cycle_time_ms = setting.cycle_time_ms;
  row.fusion_threshold_mib = setting.fusion_threshold_mib;
  row.score_bytes_per_us = score / 1e6;
  row.spread_bytes_per_us = spread / 1e6;
  row.chosen = chosen;
  const Status status = log_.Add(row);
  if (!status.ok()) {
    log_failed_ = true;
    Warn("autotune: the log is not written from now on: " + status.message());
  }
}

void CycleTuner::Warn(const std::string& line) const {
  if (warn_) {
    warn_(line);
  } else {
    std::fprintf(stderr, "libhvdrun: %s\n", line.c_str());
  }
}

std::string CycleTuner::Summary() const {
  const TunedSetting best = search_.best();
  const TunedSetting start = search_.start();
  std::ostringstream line;
  line.precision(4);
  line << "autotune: kept fusion threshold " << best.fusion_threshold_mib << " MiB and cycle time "
       << best.cycle_time_ms << " ms: " << search_.best_score() / 1e6 << " bytes/us, "
       << (search_.start_score() > 0 ? search_.best_score() / search_.start_score() : 1.0)
       << "x the starting setting's (" << start.fusion_threshold_mib << " MiB, " << start.cycle_time_ms
       << " ms: " << search_.start_score() / 1e6 << " bytes/us); " << search_.samples() << " samples, "
       << steps_scored_ << " steps scored";
  return line.str();
}

}  // namespace hvdrun
