// SettingSearch: the coordinator's sequence of settings to measure, and the one kept.
//
// A setting is a fusion threshold (MiB) and a cycle time (ms). The samples, in order:
// - the job's starting setting (the baseline the end result is compared with, and a candidate);
// - an initial design of kDesignSamples points spread over the whole box, fusion threshold 0-64 MiB
//   x cycle time 1-100 ms on a log scale: a maximin Latin hypercube (each value of either axis
//   in its own fifth of the range, the points as far from each other as such a set allows), fixed,
//   so every run and every rank sees the same;
// - then the points a BayesianOptimizer proposes. It models the fusion threshold linearly and the
//   cycle time by its logarithm (1, 10 and 100 ms equally far apart: a cycle's cost is relative to
//   the step's), over a box that includes the starting setting, so that the start's score informs
//   the model;
// - with `max_samples` of at least kConfirmFrom, the last kConfirmSamples samples are a
//   confirmation: the starting setting and the challenger, alternately, the start first. The
//   challenger is the setting measured during the search (other than the start) whose score the
//   model predicts highest, so one lucky sample does not make it; Confirmation decides from the
//   challenger's scores relative to the start's beside them whether it is kept, else the start is.
// With fewer samples the setting with the best mean score is kept (a setting measured more than
// once is judged by the mean of its scores). A value the user set explicitly is fixed: it keeps
// the starting value in every setting and the search runs over the other alone.
// Not thread-safe: rank 0's collective thread owns it.
#ifndef HVDRUN_RUNTIME_AUTOTUNE_SETTING_SEARCH_H_
#define HVDRUN_RUNTIME_AUTOTUNE_SETTING_SEARCH_H_

#include <vector>

#include "runtime/autotune/bayesian_optimizer.h"
#include "runtime/autotune/confirmation.h"

namespace hvdrun {

struct TunedSetting {
  double fusion_threshold_mib = 0;
  double cycle_time_ms = 0;
};

class SettingSearch {
 public:
  // Horovod's box, where the initial design lies; the model's box also takes in the start.
  static constexpr BayesianOptimizer::Range kFusionRangeMib{0, 64};
  static constexpr BayesianOptimizer::Range kCycleRangeMs{1, 100};
  static constexpr int kDesignSamples = 5;
  static constexpr int kConfirmSamples = 8;  // four of the start, four of the challenger
  // The fewest samples with a confirmation: the start, three points of the design and it.
  static constexpr int kConfirmFrom = kConfirmSamples + 4;

  // At least one of the two values must be free; `max_samples` >= 1.
  SettingSearch(TunedSetting start, bool fusion_fixed, bool cycle_fixed, int max_samples, double noise);

  // The setting to measure now; once done, the one kept.
  TunedSetting current() const { return current_; }

  // Records `score` (larger is better) for current() and moves on. Returns false once done.
  bool Scored(double score);
  bool done() const { return done_; }

  // The setting with the best mean score so far, and that mean; once done, the one kept and, after
  // a confirmation, its mean score in it.
  TunedSetting best() const { return best_; }
  double best_score() const { return best_score_; }
  TunedSetting start() const { return start_; }
  // The starting setting's first score; once done after a confirmation, its mean in it.
  double start_score() const { return start_score_; }
  int samples() const { return samples_; }

 private:
  // `setting`'s free values as the optimizer sees them (the cycle time's logarithm); false when
  // it lies outside the model's box.
  bool ToPoint(const TunedSetting& setting, BayesianOptimizer::Point* point) const;
  TunedSetting FromPoint(const BayesianOptimizer::Point& point) const;
  TunedSetting Design(int index) const;
  // Adds `score` to `setting`'s pooled scores and updates best_.
  void Pool(const TunedSetting& setting, double score);
  TunedSetting Challenger();
  void Finish();

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
  const BayesianOptimizer::Range fusion_box_;     // MiB
  const BayesianOptimizer::Range log_cycle_box_;  // log10 of ms
  BayesianOptimizer optimizer_;
  std::vector<Measured> measured_;
  std::vector<TunedSetting> modelled_;  // the settings given to optimizer_, in order
  TunedSetting challenger_;
  Confirmation confirmation_;
  TunedSetting current_;
  TunedSetting best_;
  double best_score_ = 0;
  double start_score_ = 0;
  int samples_ = 0;
  bool done_ = false;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_AUTOTUNE_SETTING_SEARCH_H_
