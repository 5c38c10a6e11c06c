#include "runtime/request/reducescatter_parts.h"

namespace hvdrun {

std::vector<uint64_t> ReducescatterCounts(uint64_t count, uint64_t row, int size) {
  const auto ranks = static_cast<uint64_t>(size);
  const uint64_t rows = row == 0 ? 0 : count / row;
  std::vector<uint64_t> counts(ranks);
  for (uint64_t rank = 0; rank < ranks; ++rank) {
    counts[rank] = (rows / ranks + (rank < rows % ranks ? 1 : 0)) * row;
  }
  return counts;
}

FusedReducescatterLayout PlanFusedReducescatter(const std::vector<std::vector<uint64_t>>& counts) {
  FusedReducescatterLayout layout;
  if (counts.empty()) return layout;
  const size_t ranks = counts.front().size();
  std::vector<uint64_t> taken(counts.size(), 0);  // each member's elements packed so far
  for (size_t rank = 0; rank < ranks; ++rank) {
    layout.block_starts.push_back(layout.total);
    uint64_t block = 0;
    for (size_t member = 0; member < counts.size(); ++member) {
      const uint64_t count = counts[member][rank];
      layout.pieces.push_back({member, static_cast<int>(rank), taken[member], layout.total, count});
      taken[member] += count;
      layout.total += count;
      block += count;
    }
    layout.block_counts.push_back(static_cast<size_t>(block));
  }
  return layout;
}

}  // namespace hvdrun
