// GaussianProcess: regression of a noisy score over points of the unit cube [0, 1]^d, the model the
// autotuner's search (bayesian_optimizer.h) asks where a better score may lie.
//
// The prior is zero-mean with a squared-exponential kernel k(a, b) = exp(-|a - b|^2 / (2 l^2)) plus
// `noise` on the diagonal (the scores' variance relative to the kernel's, for scores standardised by
// the caller). Fit picks the length scale l from a fixed ladder by the largest log marginal
// likelihood: deterministic, and in one or two dimensions with a few dozen points as good as a
// gradient search over l. Not thread-safe; small (n <= a few hundred points: O(n^3) per Fit).
#ifndef HVDRUN_RUNTIME_AUTOTUNE_GAUSSIAN_PROCESS_H_
#define HVDRUN_RUNTIME_AUTOTUNE_GAUSSIAN_PROCESS_H_

#include <vector>

namespace hvdrun {

class GaussianProcess {
 public:
  using Point = std::vector<double>;

  // `noise` > 0 keeps the kernel matrix positive definite even with repeated points.
  explicit GaussianProcess(double noise);

  // Conditions the model on `scores` observed at `points` (the same count, every point of the same
  // dimension). With no points, Predict returns the prior (mean 0, deviation 1).
  void Fit(const std::vector<Point>& points, const std::vector<double>& scores);

  struct Prediction {
    double mean = 0;
    double deviation = 1;  // of the latent function, without the observation noise
  };
  Prediction Predict(const Point& x) const;

  double length_scale() const { return length_scale_; }

 private:
  double Kernel(const Point& a, const Point& b, double length_scale) const;
  // Factors K + noise I for `length_scale` into lower_ and solves alpha_; returns the log marginal
  // likelihood (less its constant).
  double Factor(double length_scale);

  const double noise_;
  double length_scale_ = 0.25;
  std::vector<Point> points_;
  std::vector<double> scores_;
  std::vector<std::vector<double>> lower_;  // Cholesky factor, row-major lower triangle
  std::vector<double> alpha_;               // (K + noise I)^-1 scores
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_AUTOTUNE_GAUSSIAN_PROCESS_H_
