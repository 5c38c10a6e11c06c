#include "runtime/autotune/bayesian_optimizer.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace hvdrun {
namespace {

// How far apart (in the unit cube, along some axis) a proposal lies from every point measured: at
// a tenth of the box, two settings' scores differ by less than a sample's noise, so measuring next
// to a point again teaches the model little, and without this the acquisition of noisy scores
// settles beside the best point so far, often the start at a corner of the box.
constexpr double kApart = 0.1;

// Grid points per dimension that Next searches.
size_t GridSide(size_t dimensions) { return dimensions == 1 ? 1025 : 97; }

// `scores` less their mean, over their standard deviation (or 1 when they are all equal).
std::vector<double> Standardised(const std::vector<double>& scores) {
  const double mean = std::accumulate(scores.begin(), scores.end(), 0.0) / static_cast<double>(scores.size());
  double squares = 0;
  for (double score : scores) squares += (score - mean) * (score - mean);
  double deviation = std::sqrt(squares / static_cast<double>(scores.size()));
  if (deviation <= 0) deviation = 1;
  std::vector<double> result;
  result.reserve(scores.size());
  for (double score : scores) result.push_back((score - mean) / deviation);
  return result;
}

double ExpectedImprovement(const GaussianProcess::Prediction& p, double best, double xi) {
  if (p.deviation <= 0) return 0;
  const double improvement = p.mean - best - xi;
  const double z = improvement / p.deviation;
  const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
  return improvement * cdf + p.deviation * pdf;
}

}  // namespace

BayesianOptimizer::BayesianOptimizer(std::vector<Range> ranges, double noise, double xi)
    : ranges_(std::move(ranges)), xi_(xi), process_(noise) {}

BayesianOptimizer::Point BayesianOptimizer::ToUnit(const Point& x) const {
  Point unit(ranges_.size());
  for (size_t i = 0; i < ranges_.size(); ++i) {
    unit[i] = std::clamp((x[i] - ranges_[i].low) / (ranges_[i].high - ranges_[i].low), 0.0, 1.0);
  }
  return unit;
}

BayesianOptimizer::Point BayesianOptimizer::FromUnit(const Point& unit) const {
  Point x(ranges_.size());
  for (size_t i = 0; i < ranges_.size(); ++i) {
    x[i] = ranges_[i].low + unit[i] * (ranges_[i].high - ranges_[i].low);
  }
  return x;
}

bool BayesianOptimizer::Measured(const Point& unit, double within) const {
  for (const Point& point : points_) {
    bool near = true;
    for (size_t i = 0; i < unit.size() && near; ++i) near = std::abs(point[i] - unit[i]) < within;
    if (near) return true;
  }
  return false;
}

void BayesianOptimizer::Add(const Point& x, double score) {
  points_.push_back(ToUnit(x));
  scores_.push_back(score);
}

BayesianOptimizer::Point BayesianOptimizer::Next() {
  if (points_.empty()) return FromUnit(Point(ranges_.size(), 0.5));
  process_.Fit(points_, Standardised(scores_));
  // The best the model believes of the points measured (not their noisy scores: Brochu, Cora and de
  // Freitas, "A Tutorial on Bayesian Optimization", section 2.4).
  double best = -1e300;
  for (const Point& point : points_) best = std::max(best, process_.Predict(point).mean);

  const size_t side = GridSide(ranges_.size());
  size_t cells = 1;
  for (size_t i = 0; i < ranges_.size(); ++i) cells *= side;
  Point unit(ranges_.size());
  Point chosen(ranges_.size(), 0.5);
  double largest = -1;
  for (size_t cell = 0; cell < cells; ++cell) {
    size_t rest = cell;
    for (double& coordinate : unit) {
      coordinate = static_cast<double>(rest % side) / static_cast<double>(side - 1);
      rest /= side;
    }
    if (Measured(unit, kApart)) continue;
    const double improvement = ExpectedImprovement(process_.Predict(unit), best, xi_);
    if (improvement > largest) {
      largest = improvement;
      chosen = unit;
    }
  }
  return FromUnit(chosen);
}

std::vector<double> BayesianOptimizer::PredictedMeans() {
  std::vector<double> means;
  if (points_.empty()) return means;
  process_.Fit(points_, Standardised(scores_));
  means.reserve(points_.size());
  for (const Point& point : points_) means.push_back(process_.Predict(point).mean);
  return means;
}

}  // namespace hvdrun
