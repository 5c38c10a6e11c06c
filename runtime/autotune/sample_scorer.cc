#include "runtime/autotune/sample_scorer.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace hvdrun {

SampleScorer::SampleScorer(int steps_per_sample) : steps_per_sample_(std::max(steps_per_sample, 1)) {}

void SampleScorer::EndStep() {
  if (first_round_) {
    first_round_ = false;
    step_names_.clear();
    step_bytes_ = 0;
    step_start_ = last_end_;
    return;
  }
  const double seconds = std::chrono::duration<double>(last_end_ - step_start_).count();
  // A step that took no measurable time has no rate; it still counts as a step.
  rates_.push_back(seconds > 0 ? static_cast<double>(step_bytes_) / seconds : 0.0);
  step_names_.clear();
  step_bytes_ = 0;
  step_start_ = last_end_;
}

bool SampleScorer::Learn(const std::string& name) {
  NameRuns& runs = runs_[name];
  const uint64_t last = runs.places[0];
  ++place_;
  // Another name ran kRepeatsInStep times since `name` last did when its oldest place kept is later.
  bool found = false;
  if (last != 0 && place_ - last > kRepeatsInStep) {
    for (auto& [other, other_runs] : runs_) {
      if (!other_runs.several_a_step && other_runs.places[kRepeatsInStep - 1] > last) {
        other_runs.several_a_step = true;
        found = true;
      }
    }
  }
  for (int i = kRepeatsInStep - 1; i > 0; --i) runs.places[i] = runs.places[i - 1];
  runs.places[0] = place_;
  return found;
}

bool SampleScorer::EndsStep(const std::string& name) const {
  if (step_names_.count(name) == 0) return false;
  const auto runs = runs_.find(name);
  return runs == runs_.end() || !runs->second.several_a_step;
}

std::optional<SampleScorer::Score> SampleScorer::Record(const std::vector<std::string>& names, uint64_t bytes,
                                                        Clock::time_point end) {
  std::optional<Score> score;
  bool learnt = false;
  for (const std::string& name : names) learnt = Learn(name) || learnt;
  if (learnt) {  // the steps so far were cut short: start again at the next step's end
    rates_.clear();
    first_round_ = true;
    restarted_ = true;
  }
  const bool repeats =
      std::any_of(names.begin(), names.end(), [this](const std::string& name) { return EndsStep(name); });
  if (repeats) {
    EndStep();
    if (static_cast<int>(rates_.size()) >= steps_per_sample_) {
      std::vector<double> sorted = rates_;
      std::sort(sorted.begin(), sorted.end());
      const size_t n = sorted.size();
      Score result;
      result.bytes_per_second = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
      const double mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
      double squares = 0;
      for (double rate : sorted) squares += (rate - mean) * (rate - mean);
      result.spread = std::sqrt(squares / static_cast<double>(n));
      result.steps = static_cast<int>(n);
      score = result;
      rates_.clear();
    }
  }
  step_names_.insert(names.begin(), names.end());
  step_bytes_ += bytes;
  last_end_ = end;
  return score;
}

}  // namespace hvdrun
