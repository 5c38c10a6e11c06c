#include "runtime/request/varied_allgather.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace hvdrun {

Status VariedAllgather(Backend& backend, const void* send, DataType type, const std::vector<uint64_t>& counts,
                       int rank, AllgatherResult* result) {
  const size_t element = DataTypeSize(type);
  const uint64_t largest = counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
  uint64_t total = 0;
  for (uint64_t count : counts) total += count;
  result->counts = counts;
  result->data.assign(static_cast<size_t>(total) * element, std::byte{0});
  if (largest == 0) return Status::Ok();
  const size_t slot = static_cast<size_t>(largest) * element;
  std::vector<std::byte> padded(slot, std::byte{0});
  const size_t mine = static_cast<size_t>(counts[static_cast<size_t>(rank)]) * element;
  if (mine > 0) std::memcpy(padded.data(), send, mine);
  std::vector<std::byte> gathered(slot * counts.size());
  Status status = backend.Allgather(padded.data(), gathered.data(), static_cast<size_t>(largest), type);
  if (!status.ok()) return status;
  size_t at = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    const size_t bytes = static_cast<size_t>(counts[r]) * element;
    if (bytes > 0) std::memcpy(result->data.data() + at, gathered.data() + r * slot, bytes);
    at += bytes;
  }
  return Status::Ok();
}

}  // namespace hvdrun
