#include "examples/trainer/training_result.h"

namespace hvdrun::trainer {

Status ComputeGroupFigures(DataParallelGroup& group, TrainingResult& result) {
  StepSummary mine = SummarizeSteps(result.steps);
  std::vector<double> sums = {mine.mean_step_s, mine.img_per_sec, mine.mean_comm_wait_s};
  if (Status status = group.SumAcrossRanks(sums); !status.ok()) return status;
  const auto ranks = static_cast<double>(group.size());
  result.group.step_time_s = sums[0] / ranks;
  result.group.img_per_sec_per_rank = sums[1] / ranks;
  result.group.img_per_sec_total = sums[1];
  result.group.comm_wait_s = sums[2] / ranks;
  return Status::Ok();
}

}  // namespace hvdrun::trainer
