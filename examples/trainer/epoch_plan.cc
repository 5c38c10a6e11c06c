#include "examples/trainer/epoch_plan.h"

namespace hvdrun::trainer {

std::vector<StepSlice> PlanRemainingSteps(int64_t examples, int64_t processed, int ranks,
                                          int64_t batch_size) {
  std::vector<StepSlice> steps;
  const int64_t full = batch_size * ranks;
  for (int64_t begin = processed; begin < examples; begin += full) {
    steps.push_back({begin, begin + full < examples ? begin + full : examples});
  }
  if (steps.size() >= 2 && steps.back().size() < ranks) {
    steps[steps.size() - 2].end = steps.back().end;
    steps.pop_back();
  }
  return steps;
}

std::vector<int64_t> RankPositions(const StepSlice& slice, int rank, int ranks) {
  std::vector<int64_t> positions;
  for (int64_t position = slice.begin + rank; position < slice.end; position += ranks) {
    positions.push_back(position);
  }
  return positions;
}

}  // namespace hvdrun::trainer
