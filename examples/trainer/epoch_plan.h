// EpochPlan: how the rest of an epoch is split into steps and among the ranks of an elastic job's
// round, so that each example of the epoch is trained exactly once however the number of ranks
// changes (Horovod's ElasticSampler, with equal steps on every rank).
//
// The epoch's examples are taken in one order that every rank knows (a permutation seeded by the
// seed and the epoch, the same whatever the ranks); `processed` examples of it, a prefix, are done.
// The rest is cut into steps: each step takes the next ranks × batch_size positions of the order
// (its slice), and rank r trains on the slice's positions r, r + ranks, r + 2·ranks, ... After a
// re-formation the new round plans again from the committed `processed`, over its own ranks.
// The last slice of the epoch is shorter; when it would leave a rank without an example (fewer
// than `ranks` positions) it is joined to the one before, so a rank's batch is at most
// batch_size + 1 then. Only an epoch with fewer than `ranks` examples left gives some ranks an
// empty batch. Pure functions; thread-safe.
#ifndef HVDRUN_EXAMPLES_TRAINER_EPOCH_PLAN_H_
#define HVDRUN_EXAMPLES_TRAINER_EPOCH_PLAN_H_

#include <cstdint>
#include <vector>

namespace hvdrun::trainer {

// Positions [begin, end) of the epoch's order that one step trains on, all ranks together.
struct StepSlice {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

// The steps that train positions [processed, examples) with `ranks` ranks of `batch_size` examples
// each (all at least 1; processed <= examples). Empty when nothing is left.
std::vector<StepSlice> PlanRemainingSteps(int64_t examples, int64_t processed, int ranks, int64_t batch_size);

// Rank `rank`'s positions of `slice` among `ranks`: begin + rank, begin + rank + ranks, ... < end.
std::vector<int64_t> RankPositions(const StepSlice& slice, int rank, int ranks);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_EPOCH_PLAN_H_
