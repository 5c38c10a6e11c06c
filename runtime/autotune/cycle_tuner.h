// CycleTuner: autotuning inside the negotiated engine's cycle (AutotuneOptions, docs/autotune.md).
//
// NegotiatedStream calls AfterCycle on every rank after every cycle that ran something. A
// SampleScorer on each rank cuts the cycles into steps and samples; since where they end depends
// only on the names run, which the ranks agree on, every rank completes each sample in the same
// cycle. After the warm-up samples, at the end of each sample, rank 0 scores the setting it ran
// under (its own measurement: ranks' timings differ, and one rank decides), a SettingSearch picks
// the next (then the yes/no phases: the hierarchical allreduce, the response cache), and rank 0
// broadcasts it over the control backend: the one collective the tuner adds,
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
// When the scorer learns that a name runs several times a step (SampleScorer::TakeRestart), the
// samples so far were of steps cut short: every rank starts the tuning again, at the same cycle,
// from the warm-up and the starting setting (AUTOTUNE_RESTART where a setting was being measured),
// and rank 0's log starts again.
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
  // The job reduces hierarchically (NegotiatedStream::AllowHierarchicalSwitch, on every rank before
  // the first cycle): the log says so, and unless the user set it, the flat allreduce is tried
  // against it after the search.
  void AllowHierarchicalSwitch();
  bool done() const { return done_; }
  // Rank 0's line at the end ("autotune: kept ..."); empty before the end and on other ranks.
  const std::string& summary() const { return summary_; }

 private:
  // A yes/no setting tried after the search, as Horovod tunes its categorical ones (rank 0's):
  // SettingSearch::kConfirmSamples more samples under the search's setting, the job's value and the
  // other alternately, judged as the search's confirmation; the other is kept only when that
  // confirmation keeps it. The hierarchical allreduce's runs first, then the response cache's.
  struct YesNoPhase {
    const char* name = "";
    bool tried = false;  // run after the search
    bool start = false;  // the job's value
    bool on = false;     // the value now
    int samples_left = 0;
    Confirmation confirmation;
  };
  enum PhaseIndex : int { kHierarchicalPhase = 0, kCachePhase = 1, kPhases = 2 };

  // Rank 0: scores the setting just measured, logs it, and moves the search (or a yes/no phase) on.
  // True once the tuning is done: the setting kept is logged and said.
  bool Score(const SampleScorer::Score& score);
  // Starts the first phase from `from` on that is tried; false when none is left.
  bool StartPhase(int from);
  // Starts the tuning again from its warm-up: the change back to the starting setting, if a sample
  // had been scored (every rank's count), else nothing.
  std::optional<Change> Restart();
  // The starting setting as every rank runs it, and as rank 0 would broadcast it.
  CycleSettings StartSettings() const;
  // The kept setting's score: its mean in the last yes/no phase that ran, else the search's.
  double KeptScore() const;
  void Log(const TunedSetting& setting, double score, double spread, bool chosen);
  void Warn(const std::string& line) const;
  std::string Summary() const;

  const int rank_;
  const int local_size_;
  const bool cache_enabled_;      // the job's cache capacity is above 0
  const bool hierarchical_free_;  // not set by the user, and enough samples for a confirmation
  const CycleSettings start_settings_;
  const AutotuneOptions autotune_;
  const TunedSetting start_;  // the starting setting, as the search sees it
  const std::function<void(const std::string&)> warn_;
  bool hierarchical_runs_ = false;  // AllowHierarchicalSwitch was called
  int warmup_left_;
  int steps_scored_ = 0;
  int samples_scored_ = 0;  // every rank's count
  SampleScorer scorer_;
  std::optional<SettingSearch> search_;  // rank 0's; always engaged
  int restarts_ = 0;
  YesNoPhase phases_[kPhases];
  int phase_ = -1;   // the yes/no phase running (rank 0's); -1: the search's
  AutotuneLog log_;  // rank 0's
  bool log_failed_ = false;
  bool done_ = false;
  std::string summary_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_AUTOTUNE_CYCLE_TUNER_H_
