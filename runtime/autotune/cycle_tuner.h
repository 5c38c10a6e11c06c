// CycleTuner: autotuning inside the negotiated engine's cycle (AutotuneOptions, docs/autotune.md).
//
// NegotiatedStream calls AfterCycle on every rank after every cycle that ran something. A
// SampleScorer on each rank cuts the cycles into steps and samples; since where they end depends
// only on the names run, which the ranks agree on, every rank completes each sample in the same
// cycle. After the warm-up samples, at the end of each sample, rank 0 scores the setting it ran
// under (its own measurement: ranks' timings differ, and one rank decides), a SettingSearch picks
// the next, and rank 0 broadcasts it over the control backend: the one collective the tuner adds,
// once a sample. Every rank returns the same settings from that call and runs the next cycle with
// them. After the last sample every rank gets the best setting measured and the tuner is done: from
// then on AfterCycle returns at once. Rank 0 writes the CSV log (AutotuneLog) and, at the end, one
// line through NegotiationOptions::warn (by default standard error) naming the setting kept, its
// score against the starting setting's, and the samples taken. A log file that cannot be written
// is warned of once; the tuning goes on.
//
// Each switch comes with the mark every rank writes in its timeline (Timeline::Mark, the same args
// on every rank): AUTOTUNE where a sample starts under a setting (sample 1, the starting setting,
// where the warm-up ends; none when there is no warm-up), AUTOTUNE_KEPT where the ranks switch to
// the setting kept.
//
// Not thread-safe: the collective thread owns it.
#ifndef HVDRUN_RUNTIME_AUTOTUNE_CYCLE_TUNER_H_
#define HVDRUN_RUNTIME_AUTOTUNE_CYCLE_TUNER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hvdrun/options.h"
#include "hvdrun/status.h"
#include "runtime/autotune/autotune_log.h"
#include "runtime/autotune/confirmation.h"
#include "runtime/autotune/sample_scorer.h"
#include "runtime/autotune/setting_search.h"
#include "runtime/backend.h"
#include "runtime/negotiation/cycle_settings.h"
#include "runtime/request/tensor_request.h"
#include "runtime/timeline/timeline.h"

namespace hvdrun {

class CycleTuner {
 public:
  using Clock = std::chrono::steady_clock;

  // The tuner for a runtime started with `options`, or null when autotuning is off, or when both
  // values are fixed (rank 0 then warns that there is nothing to tune).
  static std::unique_ptr<CycleTuner> Create(const RuntimeOptions& options);

  // What the ranks switch to at the end of a sample, and the timeline's mark of it.
  struct Change {
    CycleSettings settings;
    TimelineMark mark;
  };

  explicit CycleTuner(const RuntimeOptions& options);

  // After a cycle that ran `ran` (in the agreed order) and ended at `end`: the settings the next
  // cycle runs with when the ranks switch now, else nothing. Fails only when the broadcast fails.
  StatusOr<std::optional<Change>> AfterCycle(Backend& control, const std::vector<TensorRequest>& ran,
                                             Clock::time_point end);
  bool done() const { return done_; }
  // Rank 0's line at the end ("autotune: kept ..."); empty before the end and on other ranks.
  const std::string& summary() const { return summary_; }

 private:
  // Rank 0: scores the setting just measured, logs it, and moves the search (or the cache's phase)
  // on. True once the tuning is done: the setting kept is logged and said.
  bool Score(const SampleScorer::Score& score);
  // The kept setting's score: its mean in the cache's phase, when that ran, else the search's.
  double KeptScore() const;
  void Log(const TunedSetting& setting, double score, double spread, bool chosen);
  void Warn(const std::string& line) const;
  std::string Summary() const;

  const int rank_;
  const int local_size_;
  const bool hierarchical_allreduce_;
  const bool cache_enabled_;  // the job's cache capacity is above 0
  // The cache is tuned too: on at the start, its capacity not set by the user, and enough samples
  // for a confirmation (SettingSearch::kConfirmFrom).
  const bool cache_free_;
  const CycleSettings start_settings_;
  const std::function<void(const std::string&)> warn_;
  int warmup_left_;
  int steps_scored_ = 0;
  int samples_scored_ = 0;  // every rank's count
  SampleScorer scorer_;
  SettingSearch search_;  // rank 0's
  // Rank 0's: after the search, kConfirmSamples more under its setting, the response cache on (the
  // start) and off alternately, judged as the search's confirmation; on unless off is kept.
  int cache_samples_left_ = 0;
  bool cache_on_;  // from the start: the job's
  Confirmation cache_confirmation_;
  AutotuneLog log_;  // rank 0's
  bool log_failed_ = false;
  bool done_ = false;
  std::string summary_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_AUTOTUNE_CYCLE_TUNER_H_
