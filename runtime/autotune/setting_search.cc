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

void SettingSearch::Confirm() {
  constexpr int kPairs = kConfirmSamples / 2;
  const double challenger = confirm_sums_[0] / kPairs;
  const double start = confirm_sums_[1] / kPairs;
  start_score_ = start;
  const bool challenger_kept = challenger_wins_ == kPairs;
  best_ = challenger_kept ? challenger_ : start_;
  best_score_ = challenger_kept ? challenger : start;
}

bool SettingSearch::Scored(double score) {
  if (done_) return false;
  if (samples_ == 0) start_score_ = score;
  if (samples_ < confirm_from_) {
    Pool(current_, score);
    // The starting setting informs the model only where it lies inside the box searched.
    BayesianOptimizer::Point point;
    if (ToPoint(current_, &point)) optimizer_.Add(point, score);
  } else {
    const bool challenger = (samples_ - confirm_from_) % 2 == 0;
    confirm_sums_[challenger ? 0 : 1] += score;
    if (challenger) {
      challenger_last_ = score;
    } else if (challenger_last_ > score) {
      ++challenger_wins_;
    }
  }
  ++samples_;
  if (samples_ >= max_samples_) {
    if (confirm_from_ < max_samples_) Confirm();
    done_ = true;
    current_ = best_;
    return false;
  }
  if (samples_ >= confirm_from_) {
    if (samples_ == confirm_from_) {
      // The best mean among the settings other than the start (the seeds give some).
      const Measured* challenger = nullptr;
      for (const Measured& m : measured_) {
        if (SameSetting(m.setting, start_)) continue;
        if (challenger == nullptr || m.sum / m.count > challenger->sum / challenger->count) challenger = &m;
      }
      challenger_ = challenger != nullptr ? challenger->setting : start_;
    }
    current_ = (samples_ - confirm_from_) % 2 == 0 ? challenger_ : start_;
    return true;
  }
  const int seed = samples_ - 1;
  current_ = seed < static_cast<int>(std::size(kSeeds)) ? Seed(seed) : FromPoint(optimizer_.Next());
  return true;
}

}  // namespace hvdrun
