// SettingSearch: the coordinator's sequence of settings to measure, and the best one measured.
//
// A setting is a fusion threshold (MiB) and a cycle time (ms). The first measured is the job's
// starting setting (the baseline the end result is compared with, and a candidate itself), then
// Horovod's four seeds (4 MiB 5 ms, 32 MiB 50 ms, 16 MiB 25 ms, 8 MiB 10 ms), then the points a
// BayesianOptimizer proposes over fusion threshold 0-64 MiB x cycle time 1-100 ms, until
// `max_samples` settings have been scored; then the best scored one is kept. A value the user set
// explicitly is fixed: it keeps the starting value in every setting and the search runs over the
// other alone. Not thread-safe: rank 0's collective thread owns it.
#ifndef HVDRUN_RUNTIME_AUTOTUNE_SETTING_SEARCH_H_
#define HVDRUN_RUNTIME_AUTOTUNE_SETTING_SEARCH_H_

#include <vector>

#include "runtime/autotune/bayesian_optimizer.h"

namespace hvdrun {

struct TunedSetting {
  double fusion_threshold_mib = 0;
  double cycle_time_ms = 0;
};

class SettingSearch {
 public:
  static constexpr BayesianOptimizer::Range kFusionRangeMib{0, 64};
  static constexpr BayesianOptimizer::Range kCycleRangeMs{1, 100};

  // At least one of the two values must be free; `max_samples` >= 1.
  SettingSearch(TunedSetting start, bool fusion_fixed, bool cycle_fixed, int max_samples, double noise);

  // The setting to measure now; once done, the best.
  TunedSetting current() const { return current_; }
  // Records `score` (larger is better) for current() and moves on. Returns false once done.
  bool Scored(double score);
  bool done() const { return done_; }

  TunedSetting best() const { return best_; }
  double best_score() const { return best_score_; }
  TunedSetting start() const { return start_; }
  double start_score() const { return start_score_; }
  int samples() const { return samples_; }

 private:
  // `setting`'s free values, as the optimizer sees them; nothing when it lies outside the box.
  bool ToPoint(const TunedSetting& setting, BayesianOptimizer::Point* point) const;
  TunedSetting FromPoint(const BayesianOptimizer::Point& point) const;
  TunedSetting Seed(int index) const;

  const TunedSetting start_;
  const bool fusion_fixed_;
  const bool cycle_fixed_;
  const int max_samples_;
  BayesianOptimizer optimizer_;
  TunedSetting current_;
  TunedSetting best_;
  double best_score_ = 0;
  double start_score_ = 0;
  int samples_ = 0;
  bool done_ = false;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_AUTOTUNE_SETTING_SEARCH_H_
