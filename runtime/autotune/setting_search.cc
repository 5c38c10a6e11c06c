#include "runtime/autotune/setting_search.h"

#include <algorithm>
#include <cmath>

namespace hvdrun {
namespace {

// The initial design in the unit square (fusion threshold, log cycle time): the 5-point Latin
// hypercube with the largest smallest distance between two points (found by trying all 120).
constexpr double kDesign[SettingSearch::kDesignSamples][2] = {
    {0.1, 0.1}, {0.3, 0.5}, {0.5, 0.9}, {0.7, 0.3}, {0.9, 0.7}};

bool Inside(double value, BayesianOptimizer::Range range) {
  return value >= range.low && value <= range.high;
}

// `range` grown to take in `value`.
BayesianOptimizer::Range Including(BayesianOptimizer::Range range, double value) {
  return {std::min(range.low, value), std::max(range.high, value)};
}

BayesianOptimizer::Range LogCycleBox(double start_ms) {
  const BayesianOptimizer::Range box{std::log10(SettingSearch::kCycleRangeMs.low),
                                     std::log10(SettingSearch::kCycleRangeMs.high)};
  return start_ms > 0 ? Including(box, std::log10(start_ms)) : box;
}

std::vector<BayesianOptimizer::Range> FreeRanges(bool fusion_fixed, bool cycle_fixed,
                                                 BayesianOptimizer::Range fusion,
                                                 BayesianOptimizer::Range log_cycle) {
  std::vector<BayesianOptimizer::Range> ranges;
  if (!fusion_fixed) ranges.push_back(fusion);
  if (!cycle_fixed) ranges.push_back(log_cycle);
  return ranges;
}

// The search proposes points of a grid, so the same setting comes back exactly.
bool SameSetting(const TunedSetting& a, const TunedSetting& b) {
  return a.fusion_threshold_mib == b.fusion_threshold_mib && a.cycle_time_ms == b.cycle_time_ms;
}

}  // namespace

SettingSearch::SettingSearch(TunedSetting start, bool fusion_fixed, bool cycle_fixed, int max_samples,
                             double noise)
    : start_(start),
      fusion_fixed_(fusion_fixed),
      cycle_fixed_(cycle_fixed),
      max_samples_(std::max(max_samples, 1)),
      confirm_from_(max_samples_ >= kConfirmFrom ? max_samples_ - kConfirmSamples : max_samples_),
      fusion_box_(Including(kFusionRangeMib, start.fusion_threshold_mib)),
      log_cycle_box_(LogCycleBox(start.cycle_time_ms)),
      optimizer_(FreeRanges(fusion_fixed, cycle_fixed, fusion_box_, log_cycle_box_), noise),
      current_(start),
      best_(start) {}

bool SettingSearch::ToPoint(const TunedSetting& setting, BayesianOptimizer::Point* point) const {
  point->clear();
  if (!fusion_fixed_) {
    if (!Inside(setting.fusion_threshold_mib, fusion_box_)) return false;
    point->push_back(setting.fusion_threshold_mib);
  }
  if (!cycle_fixed_) {
    if (setting.cycle_time_ms <= 0 || !Inside(std::log10(setting.cycle_time_ms), log_cycle_box_)) {
      return false;
    }
    point->push_back(std::log10(setting.cycle_time_ms));
  }
  return true;
}

TunedSetting SettingSearch::FromPoint(const BayesianOptimizer::Point& point) const {
  TunedSetting setting = start_;
  size_t next = 0;
  if (!fusion_fixed_) setting.fusion_threshold_mib = point[next++];
  if (!cycle_fixed_) setting.cycle_time_ms = std::pow(10.0, point[next++]);
  return setting;
}

TunedSetting SettingSearch::Design(int index) const {
  const double log_low = std::log10(kCycleRangeMs.low);
  const double log_high = std::log10(kCycleRangeMs.high);
  TunedSetting setting = start_;
  if (!fusion_fixed_) {
    setting.fusion_threshold_mib =
        kFusionRangeMib.low + kDesign[index][0] * (kFusionRangeMib.high - kFusionRangeMib.low);
  }
  if (!cycle_fixed_) {
    setting.cycle_time_ms = std::pow(10.0, log_low + kDesign[index][1] * (log_high - log_low));
  }
  return setting;
}

void SettingSearch::Pool(const TunedSetting& setting, double score) {
  auto same = [&](const Measured& m) { return SameSetting(m.setting, setting); };
  auto found = std::find_if(measured_.begin(), measured_.end(), same);
  if (found == measured_.end()) found = measured_.insert(measured_.end(), Measured{setting, 0, 0});
  found->sum += score;
  ++found->count;
  // The first best mean wins ties: the starting setting, measured first, when nothing beats it.
  best_score_ = measured_.front().sum / measured_.front().count;
  best_ = measured_.front().setting;
  for (const Measured& m : measured_) {
    if (m.sum / m.count > best_score_) {
      best_score_ = m.sum / m.count;
      best_ = m.setting;
    }
  }
}

TunedSetting SettingSearch::Challenger() {
  // The model's best among the settings it was given, the start aside.
  const std::vector<double> predicted = optimizer_.PredictedMeans();
  const TunedSetting* challenger = nullptr;
  double highest = 0;
  for (size_t i = 0; i < modelled_.size(); ++i) {
    if (SameSetting(modelled_[i], start_)) continue;
    if (challenger == nullptr || predicted[i] > highest) {
      challenger = &modelled_[i];
      highest = predicted[i];
    }
  }
  return challenger != nullptr ? *challenger : start_;
}

void SettingSearch::Finish() {
  done_ = true;
  if (confirm_from_ < max_samples_) {
    const bool kept = confirmation_.ChallengerKept();
    start_score_ = confirmation_.StartMean();
    best_ = kept ? challenger_ : start_;
    best_score_ = kept ? confirmation_.ChallengerMean() : start_score_;
  }
  current_ = best_;
}

bool SettingSearch::Scored(double score) {
  if (done_) return false;
  if (samples_ == 0) start_score_ = score;
  if (samples_ < confirm_from_) {
    Pool(current_, score);
    // The starting setting informs the model only where it lies inside the box searched.
    BayesianOptimizer::Point point;
    if (ToPoint(current_, &point)) {
      optimizer_.Add(point, score);
      modelled_.push_back(current_);
    }
  } else {
    confirmation_.Add(score);
  }
  ++samples_;
  if (samples_ >= max_samples_) {
    Finish();
    return false;
  }
  if (samples_ >= confirm_from_) {
    if (samples_ == confirm_from_) challenger_ = Challenger();
    current_ = (samples_ - confirm_from_) % 2 == 0 ? start_ : challenger_;
    return true;
  }
  current_ = samples_ <= kDesignSamples ? Design(samples_ - 1) : FromPoint(optimizer_.Next());
  return true;
}

}  // namespace hvdrun
