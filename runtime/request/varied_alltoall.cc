#include "runtime/request/varied_alltoall.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace hvdrun {

Status VariedAlltoall(Backend& backend, const void* send, DataType type, const std::vector<uint64_t>& splits,
                      int rank, AlltoallResult* result) {
  const size_t ranks = splits.size();
  const size_t element = DataTypeSize(type);
  // matrix[k * ranks + j]: the elements rank k sends rank j.
  std::vector<int64_t> mine(splits.begin(), splits.end());
  std::vector<int64_t> matrix(ranks * ranks);
  Status status = backend.Allgather(mine.data(), matrix.data(), ranks, DataType::kInt64);
  if (!status.ok()) return status;
  const auto me = static_cast<size_t>(rank);
  std::vector<size_t> sends(splits.begin(), splits.end());
  std::vector<size_t> receives(ranks);
  result->counts.assign(ranks, 0);
  uint64_t total = 0;
  for (size_t k = 0; k < ranks; ++k) {
    receives[k] = static_cast<size_t>(matrix[k * ranks + me]);
    result->counts[k] = receives[k];
    total += receives[k];
  }
  result->data.assign(static_cast<size_t>(total) * element, std::byte{0});
  // Every rank knows the matrix: when nobody sends anything, every rank skips the exchange.
  if (std::all_of(matrix.begin(), matrix.end(), [](int64_t count) { return count == 0; })) {
    return Status::Ok();
  }
  return backend.Alltoallv(send, sends, result->data.data(), receives, type);
}

}  // namespace hvdrun
