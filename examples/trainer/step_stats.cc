#include "examples/trainer/step_stats.h"

#include <cmath>

namespace hvdrun::trainer {

StepSummary SummarizeSteps(const std::vector<StepRecord>& steps) {
  StepSummary summary;
  if (steps.empty()) return summary;
  double total_step = 0;
  double total_compute = 0;
  double total_wait = 0;
  double total_overlapped = 0;
  double rate_sum = 0;
  for (const StepRecord& step : steps) {
    total_step += step.step_s;
    total_compute += step.compute_s;
    total_wait += step.comm_wait_s;
    total_overlapped += step.comm_overlapped_s;
    summary.images += step.images;
    rate_sum += step.img_per_sec();
  }
  const auto n = static_cast<double>(steps.size());
  summary.steps = static_cast<int64_t>(steps.size());
  summary.mean_step_s = total_step / n;
  summary.mean_compute_s = total_compute / n;
  summary.mean_comm_wait_s = total_wait / n;
  summary.mean_comm_overlapped_s = total_overlapped / n;
  summary.img_per_sec = total_step > 0 ? static_cast<double>(summary.images) / total_step : 0;
  if (steps.size() > 1) {
    const double mean_rate = rate_sum / n;
    double squares = 0;
    for (const StepRecord& step : steps) {
      squares += (step.img_per_sec() - mean_rate) * (step.img_per_sec() - mean_rate);
    }
    summary.img_per_sec_stddev = std::sqrt(squares / (n - 1));
  }
  return summary;
}

}  // namespace hvdrun::trainer
