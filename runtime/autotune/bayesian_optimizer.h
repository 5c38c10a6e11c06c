// BayesianOptimizer: proposes where to measure next when searching for the largest score of a noisy
// function over a box (the autotuner's fusion threshold x cycle time), from the scores measured so far.
//
// The model is a GaussianProcess over the box scaled to the unit cube, fitted to the scores
// standardised (mean 0, deviation 1: the scale of a job's bytes per second does not matter); the next
// point is where the expected improvement over the best predicted score so far, less `xi`, is largest.
// Horovod does the same, but finds that largest value by L-BFGS from random starts with
// finite-difference gradients; here it is searched exhaustively on a fine grid of the box (97 x 97
// points in two dimensions, 1025 in one), which in two dimensions costs a few milliseconds, finds the
// global maximum of the acquisition instead of a local one, and is deterministic: the same scores
// give the same proposal on every run. Not thread-safe.
#ifndef HVDRUN_RUNTIME_AUTOTUNE_BAYESIAN_OPTIMIZER_H_
#define HVDRUN_RUNTIME_AUTOTUNE_BAYESIAN_OPTIMIZER_H_

#include <cstddef>
#include <vector>

#include "runtime/autotune/gaussian_process.h"

namespace hvdrun {

class BayesianOptimizer {
 public:
  using Point = std::vector<double>;
  struct Range {
    double low = 0;
    double high = 1;  // > low
  };

  // Searches the box `ranges` (one per dimension, 1 or 2 of them); `noise`: the observation noise
  // relative to the standardised scores' spread (Horovod's gaussian_process_noise, 0.8 by default);
  // `xi`: how much better than the best a point must promise to be (Horovod's 0.01).
  BayesianOptimizer(std::vector<Range> ranges, double noise, double xi = 0.01);

  // Records `score` measured at `x` (in the box's units; points outside it are clamped into it).
  void Add(const Point& x, double score);
  // The point of the box with the largest expected improvement, of those a tenth of the box or more
  // from every point measured (along some axis); the box's centre before any score.
  Point Next();
  // The model's mean at each point added so far, in the order added: the scores smoothed by their
  // neighbours', less swayed by one sample's noise than the scores themselves (on the standardised
  // scale: only their order means something).
  std::vector<double> PredictedMeans();

  size_t samples() const { return points_.size(); }

 private:
  Point ToUnit(const Point& x) const;
  Point FromUnit(const Point& unit) const;
  // Whether a point measured lies within `within` of `unit` along every axis.
  bool Measured(const Point& unit, double within) const;

  const std::vector<Range> ranges_;
  const double xi_;
  GaussianProcess process_;
  std::vector<Point> points_;  // in the unit cube
  std::vector<double> scores_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_AUTOTUNE_BAYESIAN_OPTIMIZER_H_
