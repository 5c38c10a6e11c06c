#include "examples/bench/size_sweep.h"

#include <cstdint>
#include <string>

#include "examples/shared/whole_number_flag.h"

namespace hvdrun {

StatusOr<size_t> ParseByteSize(std::string_view flag, std::string_view text) {
  size_t multiplier = 1;
  std::string_view digits = text;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K':
      case 'k':
        multiplier = size_t{1} << 10;
        break;
      case 'M':
      case 'm':
        multiplier = size_t{1} << 20;
        break;
      case 'G':
      case 'g':
        multiplier = size_t{1} << 30;
        break;
      default:
        break;
    }
    if (multiplier != 1) digits.remove_suffix(1);
  }
  constexpr int64_t kMaxBytes = int64_t{1} << 40;
  StatusOr<int64_t> count =
      examples::ParseWholeNumberFlag(flag, digits, 0, kMaxBytes / static_cast<int64_t>(multiplier));
  if (count.ok()) return static_cast<size_t>(count.value()) * multiplier;
  // Quoted by appending: GCC 12's -O3 mistakes "'" + std::string(...) for an overlapping copy
  // (-Wrestrict).
  std::string quoted = std::string(flag).append(": '").append(text).append("'");
  // Digits alone can only be out of range; anything else (a sign included) is no size at all.
  if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos) {
    return Status::Error(quoted + " is too large");
  }
  return Status::Error(quoted + " is not a size (expected a number with an optional K, M or G)");
}

StatusOr<std::vector<size_t>> SweepSizes(size_t min_bytes, size_t max_bytes, size_t factor,
                                         size_t element_bytes) {
  if (factor < 2) return Status::Error("-f: the factor must be at least 2");
  if (max_bytes < min_bytes) return Status::Error("-e: the largest size is below the smallest (-b)");
  std::vector<size_t> sizes;
  for (size_t bytes = min_bytes;; bytes *= factor) {
    sizes.push_back(bytes / element_bytes * element_bytes);
    if (bytes == 0 || bytes > max_bytes / factor) break;
  }
  return sizes;
}

double AlgorithmBandwidth(size_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
}

double AllreduceBusBandwidth(double algorithm_bandwidth, int ranks) {
  return ranks > 0 ? algorithm_bandwidth * 2.0 * (ranks - 1) / ranks : 0.0;
}

}  // namespace hvdrun
