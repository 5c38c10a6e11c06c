#include "runtime/autotune/gaussian_process.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hvdrun {
namespace {

// The length scales Fit chooses from, in units of the unit cube's side.
constexpr double kLengthScales[] = {0.08, 0.12, 0.18, 0.25, 0.35, 0.5, 0.7, 1.0};

// Solves L y = b for lower-triangular L.
std::vector<double> SolveLower(const std::vector<std::vector<double>>& lower, const std::vector<double>& b) {
  std::vector<double> y(b.size());
  for (size_t i = 0; i < b.size(); ++i) {
    double sum = b[i];
    for (size_t j = 0; j < i; ++j) sum -= lower[i][j] * y[j];
    y[i] = sum / lower[i][i];
  }
  return y;
}

// Solves L^T x = y for lower-triangular L.
std::vector<double> SolveUpper(const std::vector<std::vector<double>>& lower, const std::vector<double>& y) {
  std::vector<double> x(y.size());
  for (size_t i = y.size(); i-- > 0;) {
    double sum = y[i];
    for (size_t j = i + 1; j < y.size(); ++j) sum -= lower[j][i] * x[j];
    x[i] = sum / lower[i][i];
  }
  return x;
}

}  // namespace

GaussianProcess::GaussianProcess(double noise) : noise_(std::max(noise, 1e-6)) {}

double GaussianProcess::Kernel(const Point& a, const Point& b, double length_scale) const {
  double squared = 0;
  for (size_t i = 0; i < a.size(); ++i) squared += (a[i] - b[i]) * (a[i] - b[i]);
  return std::exp(-squared / (2 * length_scale * length_scale));
}

double GaussianProcess::Factor(double length_scale) {
  const size_t n = points_.size();
  lower_.assign(n, std::vector<double>(n, 0.0));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j <= i; ++j) {
      double sum = Kernel(points_[i], points_[j], length_scale) + (i == j ? noise_ : 0.0);
      for (size_t k = 0; k < j; ++k) sum -= lower_[i][k] * lower_[j][k];
      // The noise on the diagonal keeps sum > 0; the guard only covers rounding.
      lower_[i][j] = i == j ? std::sqrt(std::max(sum, 1e-12)) : sum / lower_[j][j];
    }
  }
  alpha_ = SolveUpper(lower_, SolveLower(lower_, scores_));
  double likelihood = 0;
  for (size_t i = 0; i < n; ++i) likelihood -= 0.5 * scores_[i] * alpha_[i] + std::log(lower_[i][i]);
  return likelihood;
}

void GaussianProcess::Fit(const std::vector<Point>& points, const std::vector<double>& scores) {
  points_ = points;
  scores_ = scores;
  double best = -std::numeric_limits<double>::infinity();
  double chosen = length_scale_;
  for (double length_scale : kLengthScales) {
    const double likelihood = Factor(length_scale);
    if (likelihood > best) {
      best = likelihood;
      chosen = length_scale;
    }
  }
  length_scale_ = chosen;
  Factor(length_scale_);
}

GaussianProcess::Prediction GaussianProcess::Predict(const Point& x) const {
  if (points_.empty()) return {};
  std::vector<double> k(points_.size());
  for (size_t i = 0; i < points_.size(); ++i) k[i] = Kernel(points_[i], x, length_scale_);
  Prediction prediction;
  prediction.mean = 0;
  for (size_t i = 0; i < k.size(); ++i) prediction.mean += k[i] * alpha_[i];
  const std::vector<double> v = SolveLower(lower_, k);
  double explained = 0;
  for (double value : v) explained += value * value;
  prediction.deviation = std::sqrt(std::max(1.0 - explained, 0.0));
  return prediction;
}

}  // namespace hvdrun
