#include "runtime/varied_alltoall.h"

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
  const int64_t largest = matrix.empty() ? 0 : *std::max_element(matrix.begin(), matrix.end());
  const auto me = static_cast<size_t>(rank);
  result->counts.assign(ranks, 0);
  uint64_t total = 0;
  for (size_t k = 0; k < ranks; ++k) {
    result->counts[k] = static_cast<uint64_t>(matrix[k * ranks + me]);
    total += result->counts[k];
  }
  result->data.assign(static_cast<size_t>(total) * element, std::byte{0});
  if (largest == 0) return Status::Ok();
  const size_t block = static_cast<size_t>(largest) * element;
  std::vector<std::byte> padded(block * ranks, std::byte{0});
  const auto* from = static_cast<const std::byte*>(send);
  for (size_t j = 0; j < ranks; ++j) {
    const size_t bytes = static_cast<size_t>(splits[j]) * element;
    if (bytes > 0) std::memcpy(padded.data() + j * block, from, bytes);
    from += bytes;
  }
  std::vector<std::byte> received(block * ranks);
  status = backend.Alltoall(padded.data(), received.data(), static_cast<size_t>(largest), type);
  if (!status.ok()) return status;
  size_t at = 0;
  for (size_t k = 0; k < ranks; ++k) {
    const size_t bytes = static_cast<size_t>(result->counts[k]) * element;
    if (bytes > 0) std::memcpy(result->data.data() + at, received.data() + k * block, bytes);
    at += bytes;
  }
  return Status::Ok();
}

}  // namespace hvdrun
