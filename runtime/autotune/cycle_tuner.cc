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

// What rank 0 broadcasts at the end of a sample.
struct Switch {
  int64_t fusion_threshold_bytes = 0;
  int64_t cycle_time_us = 0;
  int64_t done = 0;
  int64_t score_bytes_per_second = 0;  // the sample's just ended; once done, the kept setting's
  int64_t response_cache = 1;          // the response cache serves
  int64_t hierarchical_allreduce = 0;  // the allreduces run hierarchically
};

// The timeline's mark of a switch to `message` after `samples` samples were scored.
TimelineMark SwitchMark(const Switch& message, const CycleSettings& used, int samples) {
  TimelineMark mark;
  mark.name = std::string(message.done != 0 ? kTimelineAutotuneKept : kTimelineAutotune);
  mark.args = {{"fusion_threshold_mib", static_cast<double>(message.fusion_threshold_bytes) / kMib},
               {"fusion_threshold_bytes", static_cast<double>(used.fusion_threshold_bytes)},
               {"cycle_time_ms", static_cast<double>(message.cycle_time_us) / 1000},
               {"response_cache", static_cast<double>(message.response_cache)},
               {"hierarchical_allreduce", static_cast<double>(message.hierarchical_allreduce)}};
  if (message.done != 0) {
    mark.args.push_back({"samples", static_cast<double>(samples)});
    mark.args.push_back({"score_bytes_per_us", static_cast<double>(message.score_bytes_per_second) / 1e6});
  } else {
    mark.args.push_back({"sample", static_cast<double>(samples + 1)});
    if (samples > 0) {
      mark.args.push_back(
          {"previous_score_bytes_per_us", static_cast<double>(message.score_bytes_per_second) / 1e6});
    }
  }
  return mark;
}

// What rank 0 would broadcast for the starting setting, run as `settings`.
Switch StartSwitch(const CycleSettings& settings, const TunedSetting& start) {
  Switch message;
  message.fusion_threshold_bytes = std::llround(start.fusion_threshold_mib * kMib);
  message.cycle_time_us = settings.cycle_time.count();
  message.response_cache = settings.response_cache ? 1 : 0;
  message.hierarchical_allreduce = settings.hierarchical_allreduce ? 1 : 0;
  return message;
}

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
      cache_enabled_(options.negotiation.cache_capacity > 0),
      hierarchical_free_(!options.autotune.hierarchical_allreduce_fixed &&
                         options.autotune.max_samples >= SettingSearch::kConfirmFrom),
      start_settings_(CycleSettings::From(options)),
      autotune_(options.autotune),
      start_(StartingSetting(options.negotiation)),
      warn_(options.negotiation.warn),
      warmup_left_(options.autotune.warmup_samples),
      scorer_(options.autotune.steps_per_sample),
      search_(std::in_place, start_, autotune_.fusion_threshold_fixed, autotune_.cycle_time_fixed,
              autotune_.max_samples, autotune_.gaussian_process_noise),
      log_(options.rank == 0 ? options.autotune.log_file : std::string()) {
  YesNoPhase& cache = phases_[kCachePhase];
  cache.name = "response cache";
  cache.tried = cache_enabled_ && !options.autotune.cache_capacity_fixed &&
                options.autotune.max_samples >= SettingSearch::kConfirmFrom;
  cache.start = cache.on = cache_enabled_;
  phases_[kHierarchicalPhase].name = "hierarchical allreduce";
}

void CycleTuner::AllowHierarchicalSwitch() {
  hierarchical_runs_ = true;
  YesNoPhase& hierarchical = phases_[kHierarchicalPhase];
  hierarchical.tried = hierarchical_free_;
  hierarchical.start = hierarchical.on = true;
}

StatusOr<std::optional<CycleTuner::Change>> CycleTuner::AfterCycle(Backend& control,
                                                                   const std::vector<TensorRequest>& ran,
                                                                   Clock::time_point end) {
  if (done_ || ran.empty()) return std::optional<Change>();
  std::vector<std::string> names;
  names.reserve(ran.size());
  uint64_t bytes = 0;
  for (const TensorRequest& request : ran) {
    names.push_back(request.name);
    bytes += request.bytes();
  }
  const std::optional<SampleScorer::Score> score = scorer_.Record(names, bytes, end);
  if (scorer_.TakeRestart()) return Restart();
  if (!score) return std::optional<Change>();
  if (warmup_left_ > 0) {
    // The last warm-up sample ends: the first scored starts, under the starting setting.
    if (--warmup_left_ > 0) return std::optional<Change>();
    const CycleSettings settings = StartSettings();
    return std::optional<Change>(Change{settings, SwitchMark(StartSwitch(settings, start_), settings, 0)});
  }
  Switch message;
  if (rank_ == 0) {
    const bool finished = Score(*score);
    const TunedSetting next = search_->current();
    message.fusion_threshold_bytes = std::llround(next.fusion_threshold_mib * kMib);
    message.cycle_time_us = std::llround(next.cycle_time_ms * 1000);
    message.done = finished ? 1 : 0;
    message.score_bytes_per_second = std::llround(finished ? KeptScore() : score->bytes_per_second);
    message.response_cache = phases_[kCachePhase].on ? 1 : 0;
    message.hierarchical_allreduce = phases_[kHierarchicalPhase].on ? 1 : 0;
  }
  static_assert(sizeof(Switch) == 6 * sizeof(int64_t));
  Status status = control.Broadcast(&message, 6, DataType::kInt64, 0);
  if (!status.ok()) {
    return Status::Error("autotune: broadcasting the next setting failed: " + status.message());
  }
  done_ = message.done != 0;
  ++samples_scored_;
  CycleSettings settings;
  settings.cycle_time = std::chrono::microseconds(message.cycle_time_us);
  settings.fusion_threshold_bytes =
      EffectiveFusionThreshold(static_cast<size_t>(message.fusion_threshold_bytes), local_size_);
  settings.response_cache = cache_enabled_ && message.response_cache != 0;
  settings.hierarchical_allreduce = hierarchical_runs_ && message.hierarchical_allreduce != 0;
  return std::optional<Change>(Change{settings, SwitchMark(message, settings, samples_scored_)});
}

CycleSettings CycleTuner::StartSettings() const {
  CycleSettings settings = start_settings_;
  settings.hierarchical_allreduce = hierarchical_runs_;
  return settings;
}

std::optional<CycleTuner::Change> CycleTuner::Restart() {
  const bool measuring = samples_scored_ > 0;
  ++restarts_;
  warmup_left_ = autotune_.warmup_samples;
  steps_scored_ = 0;
  samples_scored_ = 0;
  search_.emplace(start_, autotune_.fusion_threshold_fixed, autotune_.cycle_time_fixed, autotune_.max_samples,
                  autotune_.gaussian_process_noise);
  for (YesNoPhase& phase : phases_) {
    phase.on = phase.start;
    phase.samples_left = 0;
    phase.confirmation = Confirmation();
  }
  phase_ = -1;
  if (rank_ == 0 && !log_failed_) {
    if (const Status status = log_.Clear(); !status.ok()) {
      log_failed_ = true;
      Warn("autotune: the log is not written from now on: " + status.message());
    }
  }
  if (!measuring) return std::nullopt;
  const CycleSettings settings = StartSettings();
  TimelineMark mark = SwitchMark(StartSwitch(settings, start_), settings, 0);
  mark.name = std::string(kTimelineAutotuneRestart);
  return Change{settings, std::move(mark)};
}

bool CycleTuner::Score(const SampleScorer::Score& score) {
  const TunedSetting measured = search_->current();
  steps_scored_ += score.steps;
  Log(measured, score.bytes_per_second, score.spread, false);
  if (phase_ < 0) {
    search_->Scored(score.bytes_per_second);
    if (!search_->done() || StartPhase(0)) return false;
  } else {  // a yes/no phase: the start's value, the other, the start's, ...
    YesNoPhase& phase = phases_[phase_];
    phase.confirmation.Add(score.bytes_per_second);
    if (--phase.samples_left > 0) {
      phase.on = !phase.on;
      return false;
    }
    phase.on = phase.confirmation.ChallengerKept() ? !phase.start : phase.start;
    if (StartPhase(phase_ + 1)) return false;
  }
  Log(search_->best(), KeptScore(), 0, true);
  summary_ = Summary();
  Warn(summary_);
  return true;
}

bool CycleTuner::StartPhase(int from) {
  for (phase_ = from; phase_ < kPhases; ++phase_) {
    YesNoPhase& phase = phases_[phase_];
    if (!phase.tried) continue;
    phase.on = phase.start;
    phase.samples_left = SettingSearch::kConfirmSamples;
    return true;
  }
  return false;
}

double CycleTuner::KeptScore() const {
  for (int i = kPhases - 1; i >= 0; --i) {
    const YesNoPhase& phase = phases_[i];
    if (!phase.tried || phase.confirmation.Ratios().empty()) continue;
    return phase.on == phase.start ? phase.confirmation.StartMean() : phase.confirmation.ChallengerMean();
  }
  return search_->best_score();
}

void CycleTuner::Log(const TunedSetting& setting, double score, double spread, bool chosen) {
  if (log_failed_) return;
  AutotuneLog::Row row;
  row.hierarchical_allreduce = phases_[kHierarchicalPhase].on;
  row.cache_enabled = phases_[kCachePhase].on;
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
  const TunedSetting best = search_->best();
  const TunedSetting start = search_->start();
  std::ostringstream line;
  line.precision(4);
  line << "autotune: kept fusion threshold " << best.fusion_threshold_mib << " MiB and cycle time "
       << best.cycle_time_ms << " ms: " << search_->best_score() / 1e6 << " bytes/us, "
       << (search_->start_score() > 0 ? search_->best_score() / search_->start_score() : 1.0)
       << "x the starting setting's (" << start.fusion_threshold_mib << " MiB, " << start.cycle_time_ms
       << " ms: " << search_->start_score() / 1e6 << " bytes/us)";
  int samples = search_->samples();
  for (const YesNoPhase& phase : phases_) {
    if (!phase.tried || phase.confirmation.Ratios().empty()) continue;
    const double other_against_start =
        phase.confirmation.StartMean() > 0
            ? phase.confirmation.ChallengerMean() / phase.confirmation.StartMean()
            : 1.0;
    line << "; " << phase.name << " kept " << (phase.on ? "on" : "off") << " ("
         << (phase.start ? "off" : "on") << " scored " << other_against_start << "x "
         << (phase.start ? "on" : "off") << "'s, alternating)";
    samples += SettingSearch::kConfirmSamples;
  }
  line << "; " << samples << " samples, " << steps_scored_ << " steps scored";
  if (restarts_ > 0) {
    line << " (started again " << restarts_ << (restarts_ == 1 ? " time" : " times")
         << ": a tensor name ran several times a step, which cut steps short before it was seen)";
  }
  return line.str();
}

}  // namespace hvdrun
