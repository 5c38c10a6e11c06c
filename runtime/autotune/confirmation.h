// Confirmation: whether a challenger setting beats the starting one, judged from scores measured
// alternately close in time (start, challenger, start, challenger, ...), the end of the autotuner's
// search (setting_search.h).
//
// On a shared machine the noise is mostly drift: other processes' load comes and goes over seconds,
// longer than a sample, and moves every setting's score alike. So each challenger score is taken
// relative to the start's scores beside it (the mean of the one before and the one after, or the one
// there is): the drift cancels in the ratio. The challenger is kept when the median of these ratios
// exceeds 1 + kMargin, at most one ratio is below 1 (a sign test's spirit: it must win beside the
// start nearly every time, not once by much), and the ratios' logarithms are above 0 by more than
// their own spread explains (kMinT). A challenger equal to the start or worse than it is
// therefore kept only when the drift changes between neighbouring samples in its favour several
// times; one 15% better is kept in most runs with drift of +-20% (confirmation_test.cc measures
// both). Keeping the start is the safe error: the job then ends where it began.
// Not thread-safe; a value type.
#ifndef HVDRUN_RUNTIME_AUTOTUNE_CONFIRMATION_H_
#define HVDRUN_RUNTIME_AUTOTUNE_CONFIRMATION_H_

#include <vector>

namespace hvdrun {

class Confirmation {
 public:
  // How much better than the start, in the median of the ratios, the challenger must be: gains
  // below it are not told from drift between neighbouring samples reliably enough to risk a loss.
  static constexpr double kMargin = 0.08;
  // And the ratios' logarithms must be above 0 by more than their spread explains: Student's t of
  // their mean at least this (one-sided 95% with 3 degrees of freedom, for 4 ratios). A setting
  // whose steps are sometimes far faster and sometimes far slower than the start's (fusion off on a
  // loaded machine) then stays out even when its median wins.
  static constexpr double kMinT = 2.35;

  // The next score of the sequence: the start's first, then the challenger's, alternately.
  void Add(double score);
  // Whether the challenger is kept; false before it has two scores.
  bool ChallengerKept() const;

  // The challenger's scores relative to the start's beside them, in order.
  std::vector<double> Ratios() const;
  // The means of the challenger's and the start's scores (0 when none).
  double ChallengerMean() const { return Mean(challenger_); }
  double StartMean() const { return Mean(start_); }

 private:
  static double Mean(const std::vector<double>& scores);
  // The mean of log(ratios) over its standard error (infinite when they are all equal and above 1).
  static double LogRatioT(const std::vector<double>& ratios);

  std::vector<double> start_;       // the start's scores, in order
  std::vector<double> challenger_;  // the challenger's; challenger_[i] follows start_[i]
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_AUTOTUNE_CONFIRMATION_H_
