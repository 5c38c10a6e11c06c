#include "runtime/autotune/setting_search.h"

#include <algorithm>
#include <iterator>

namespace hvdrun {
namespace {

constexpr TunedSetting kSeeds[] = {{4, 5}, {32, 50}, {16, 25}, {8, 10}};

bool Inside(double value, BayesianOptimizer::Range range) {
  return value >= range.low && value <= range.high;
}

std::vector<BayesianOptimizer::Range> FreeRanges(bool fusion_fixed, bool cycle_fixed) {
  std::vector<BayesianOptimizer::Range> ranges;
  if (!fusion_fixed) ranges.push_back(SettingSearch::kFusionRangeMib);
  if (!cycle_fixed) ranges.push_back(SettingSearch::kCycleRangeMs);
  return ranges;
}

}  // namespace

SettingSearch::SettingSearch(TunedSetting start, bool fusion_fixed, bool cycle_fixed, int max_samples,
                             double noise)
    : start_(start),
      fusion_fixed_(fusion_fixed),
      cycle_fixed_(cycle_fixed),
      max_samples_(std::max(max_samples, 1)),
      optimizer_(FreeRanges(fusion_fixed, cycle_fixed), noise),
      current_(start),
      best_(start) {}

bool SettingSearch::ToPoint(const TunedSetting& setting, BayesianOptimizer::Point* point) const {
  point->clear();
  if (!fusion_fixed_) {
    if (!Inside(setting.fusion_threshold_mib, kFusionRangeMib)) return false;
    point->push_back(setting.fusion_threshold_mib);
  }
  if (!cycle_fixed_) {
    if (!Inside(setting.cycle_time_ms, kCycleRangeMs)) return false;
    point->push_back(setting.cycle_time_ms);
  }
  return true;
}

TunedSetting SettingSearch::FromPoint(const BayesianOptimizer::Point& point) const {
  TunedSetting setting = start_;
  size_t next = 0;
  if (!fusion_fixed_) setting.fusion_threshold_mib = point[next++];
  if (!cycle_fixed_) setting.cycle_time_ms = point[next++];
  return setting;
}

TunedSetting SettingSearch::Seed(int index) const {
  TunedSetting setting = kSeeds[index];
  if (fusion_fixed_) setting.fusion_threshold_mib = start_.fusion_threshold_mib;
  if (cycle_fixed_) setting.cycle_time_ms = start_.cycle_time_ms;
  return setting;
}

bool SettingSearch::Scored(double score) {
  if (done_) return false;
  if (samples_ == 0) start_score_ = score;
  if (samples_ == 0 || score > best_score_) {
    best_score_ = score;
    best_ = current_;
  }
  ++samples_;
  // The starting setting informs the model only where it lies inside the box searched.
  BayesianOptimizer::Point point;
  if (ToPoint(current_, &point)) optimizer_.Add(point, score);
  if (samples_ >= max_samples_) {
    done_ = true;
    current_ = best_;
    return false;
  }
  const int seed = samples_ - 1;
  current_ = seed < static_cast<int>(std::size(kSeeds)) ? Seed(seed) : FromPoint(optimizer_.Next());
  return true;
}

}  // namespace hvdrun
