// SettingSearch: the coordinator's sequence of settings to measure, and the best one measured.
//
// A setting is a fusion threshold (MiB) and a cycle time (ms). The first measured is the job's
// starting setting (the baseline the end result is compared with, and a candidate itself), then
// Horovod's four seeds (4 MiB 5 ms, 32 MiB 50 ms, 16 MiB 25 ms, 8 MiB 10 ms), then the points a
// BayesianOptimizer proposes over fusion threshold 0-64 MiB x cycle time 1-100 ms. A setting
// measured more than once is judged by the mean of its scores. With `max_samples` of at least
// kConfirmFrom, the last kConfirmSamples samples are a confirmation: the best other setting so far
// (the challenger) and the starting setting, alternately, in pairs; the challenger is kept only if
// it scores higher than the start in every pair, else the start is. So a setting wins by being
// faster when measured beside the start, not by a lucky spell while the machine was quiet (on a
// shared machine the noise drifts over seconds, longer than a sample), and a job ends on a setting
// worse than its start only if that setting won every pair. With fewer samples the best mean is
// kept. A value the user set explicitly is fixed: it keeps the starting value in every setting
// and the search runs over the other alone. Not thread-safe: rank 0's collective thread owns it.
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
  static constexpr int kConfirmSamples = 6;  // three pairs
  static constexpr int kConfirmFrom = 10;

  // Records `score` (larger is better) for current() and moves on. Returns false once done.
  bool Scored(double score);
  bool done() const { return done_; }

  // The setting with the best mean score so far, and that mean; once done, the one kept and its
  // confirmation mean (when there was a confirmation).
  TunedSetting best() const { return best_; }
  double best_score() const { return best_score_; }
  TunedSetting start() const { return start_; }
  // The starting setting's first score; once done after a confirmation, its confirmation mean.
  double start_score() const { return start_score_; }
  int samples() const { return samples_; }

 private:
  // `setting`'s free values, as the optimizer sees them; nothing when it lies outside the box.
  bool ToPoint(const TunedSetting& setting, BayesianOptimizer::Point* point) const;
  TunedSetting FromPoint(const BayesianOptimizer::Point& point) const;
  TunedSetting Seed(int index) const;
  // Adds `score` to `setting`'s pooled scores and updates best_.
  void Pool(const TunedSetting& setting, double score);
  // Ends the search after the confirmation: keeps the challenger or the start.
  void Confirm();

  // The scores of one setting measured during the search, pooled.
  struct Measured {
    TunedSetting setting;
    double sum = 0;
    int count = 0;
  };

  const TunedSetting start_;
  const bool fusion_fixed_;
  const bool cycle_fixed_;
  const int max_samples_;
  const int confirm_from_;  // the sample from which the confirmation runs; max_samples_: none
  BayesianOptimizer optimizer_;
  std::vector<Measured> measured_;
  TunedSetting challenger_;
  double confirm_sums_[2] = {0, 0};  // the challenger's, the start's
  double challenger_last_ = 0;       // the challenger's score in the pair under way
  int challenger_wins_ = 0;          // pairs in which the challenger scored higher
  TunedSetting current_;
  TunedSetting best_;
  double best_score_ = 0;
  double start_score_ = 0;
  int samples_ = 0;
  bool done_ = false;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_AUTOTUNE_SETTING_SEARCH_H_
