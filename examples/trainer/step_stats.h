// The timing of training steps: what each step records, and the figures over many steps that
// rank 0 prints and every rank reports.
#ifndef HVDRUN_EXAMPLES_TRAINER_STEP_STATS_H_
#define HVDRUN_EXAMPLES_TRAINER_STEP_STATS_H_

#include <cstdint>
#include <vector>

namespace hvdrun::trainer {

// One training step on one rank, in seconds of wall-clock time.
struct StepRecord {
  double step_s = 0;       // forward, backward, gradient averaging and the optimizer's update
  double comm_wait_s = 0;  // spent waiting for gradient averages after backward: not overlapped
  double compute_s = 0;    // step_s − comm_wait_s
  // From the first gradient reduction's start to the end of backward: communication in flight
  // while backward still computed (part of compute_s; the backend may have been idle in between).
  double comm_overlapped_s = 0;
  int64_t images = 0;  // images this rank processed in the step
  double loss = 0;     // the batch's mean loss
  double img_per_sec() const { return step_s > 0 ? static_cast<double>(images) / step_s : 0; }
};

struct StepSummary {
  int64_t steps = 0;
  int64_t images = 0;
  double mean_step_s = 0;
  double mean_compute_s = 0;
  double mean_comm_wait_s = 0;
  double mean_comm_overlapped_s = 0;
  // Images over the summed step time: this rank's throughput.
  double img_per_sec = 0;
  // Standard deviation of the steps' own images/s (0 for fewer than two steps).
  double img_per_sec_stddev = 0;
};

// All zeros for no steps.
StepSummary SummarizeSteps(const std::vector<StepRecord>& steps);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_STEP_STATS_H_
