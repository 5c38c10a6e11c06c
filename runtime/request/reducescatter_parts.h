// ReducescatterParts: which rows of a reducescatter each rank receives, alone and fused.
//
// A reducescatter reduces every rank's `count` elements (whole rows of `row` elements) and leaves
// each rank its part of the rows, split as Horovod splits the first dimension
// (ReducescatterOp::ComputeOutputShapeForRank): rows / size to every rank, one more to each of the
// first rows % size ranks. Several reducescatters fused into one backend call are packed as Horovod's
// fusion buffer packs them: rank 0's part of every member in member order, then rank 1's, and so on,
// so that each rank's block of the buffer is contiguous. Pure functions; thread-safe.
#ifndef HVDRUN_RUNTIME_REQUEST_REDUCESCATTER_PARTS_H_
#define HVDRUN_RUNTIME_REQUEST_REDUCESCATTER_PARTS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hvdrun {

// The elements each of `size` ranks receives of `count` elements in rows of `row` (row >= 1 and
// count a multiple of it; size >= 1).
std::vector<uint64_t> ReducescatterCounts(uint64_t count, uint64_t row, int size);

// The layout of a fused reducescatter whose member m gives each rank counts[m][r] elements.
struct FusedReducescatterLayout {
  // One member's part for one rank: `count` elements at element `from` of the member's send buffer,
  // at element `at` of the fused buffer.
  struct Piece {
    size_t member = 0;
    int rank = 0;
    uint64_t from = 0;
    uint64_t at = 0;
    uint64_t count = 0;
  };
  std::vector<size_t> block_counts;    // elements of each rank's block, in rank order
  std::vector<uint64_t> block_starts;  // where each rank's block begins in the fused buffer
  std::vector<Piece> pieces;           // in the fused buffer's order
  uint64_t total = 0;                  // elements of the fused buffer
};

// counts[m] has one entry per rank, as ReducescatterCounts gives them.
FusedReducescatterLayout PlanFusedReducescatter(const std::vector<std::vector<uint64_t>>& counts);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_REQUEST_REDUCESCATTER_PARTS_H_
