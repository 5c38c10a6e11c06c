#include "runtime/autotune/confirmation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace hvdrun {

void Confirmation::Add(double score) {
  if (start_.size() == challenger_.size()) {
    start_.push_back(score);
  } else {
    challenger_.push_back(score);
  }
}

double Confirmation::Mean(const std::vector<double>& scores) {
  if (scores.empty()) return 0;
  return std::accumulate(scores.begin(), scores.end(), 0.0) / static_cast<double>(scores.size());
}

std::vector<double> Confirmation::Ratios() const {
  std::vector<double> ratios;
  ratios.reserve(challenger_.size());
  for (size_t i = 0; i < challenger_.size(); ++i) {
    // start_[i] came just before challenger_[i], start_[i + 1] (when measured) just after.
    const double beside = i + 1 < start_.size() ? (start_[i] + start_[i + 1]) / 2 : start_[i];
    ratios.push_back(beside > 0 && challenger_[i] > 0 ? challenger_[i] / beside : 1e-9);
  }
  return ratios;
}

bool Confirmation::ChallengerKept() const {
  std::vector<double> ratios = Ratios();
  if (ratios.size() < 2) return false;
  const auto below = std::count_if(ratios.begin(), ratios.end(), [](double ratio) { return ratio <= 1; });
  // Of three or more ratios one may be a drift's change between neighbours; of two, none.
  if (below > (ratios.size() >= 3 ? 1 : 0)) return false;
  std::sort(ratios.begin(), ratios.end());
  const size_t half = ratios.size() / 2;
  const double median = ratios.size() % 2 == 1 ? ratios[half] : (ratios[half - 1] + ratios[half]) / 2;
  return median > 1 + kMargin && LogRatioT(ratios) > kMinT;
}

double Confirmation::LogRatioT(const std::vector<double>& ratios) {
  const auto count = static_cast<double>(ratios.size());
  double mean = 0;
  for (double ratio : ratios) mean += std::log(ratio) / count;
  double squares = 0;
  for (double ratio : ratios) squares += (std::log(ratio) - mean) * (std::log(ratio) - mean);
  const double deviation = std::sqrt(squares / (count - 1));
  if (deviation <= 0) return mean > 0 ? std::numeric_limits<double>::infinity() : 0;
  return mean / (deviation / std::sqrt(count));
}

}  // namespace hvdrun
