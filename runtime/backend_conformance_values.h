// What the backend conformance cases (backend_conformance.cc) compute with: the types, ops and counts
// they cover, each rank's inputs, the float64 references of the reductions over them with the
// rounding each may show. Test support, as backend_conformance.h: never part of libhvdrun.
#ifndef HVDRUN_RUNTIME_BACKEND_CONFORMANCE_VALUES_H_
#define HVDRUN_RUNTIME_BACKEND_CONFORMANCE_VALUES_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "hvdrun/types.h"
#include "runtime/element_conversion.h"

namespace hvdrun::testing {

inline constexpr DataType kAllTypes[] = {DataType::kFloat32,  DataType::kFloat64, DataType::kFloat16,
                                         DataType::kBFloat16, DataType::kInt32,   DataType::kInt64};
inline constexpr ReduceOp kAllOps[] = {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMin, ReduceOp::kMax};
// 1024 and 1025: an 8-byte type's 8192 and 8200 bytes, each side of Gloo's direct-exchange limit.
inline constexpr size_t kAllreduceCounts[] = {0, 1, 7, 1024, 1025, 1'000'003};
inline constexpr size_t kBroadcastCounts[] = {0, 1, 7, 100'003};
inline constexpr size_t kAllgatherCounts[] = {0, 1, 7, 50'001};
// Element mismatches reported per call: the first few say what is wrong; the rest would only repeat it.
inline constexpr int kMismatchesReported = 3;

inline bool IsInteger(DataType type) { return type == DataType::kInt32 || type == DataType::kInt64; }

// Rank `rank`'s input element i. Inputs are multiples of 0.5 in [-8, 8] (integer types: whole
// numbers, and int64 adds a multiple of 2^33 so that a 32-bit truncation would show), so that every
// partial sum of up to four ranks is exactly representable in every type, float16 and bfloat16
// included: sum, min and max must then match the float64 reference exactly, whatever order a
// backend adds in.
inline double InputValue(DataType type, int rank, size_t i) {
  const auto step =
      static_cast<double>(static_cast<int64_t>((i * 7 + static_cast<size_t>(rank) * 13) % 33) - 16);
  if (type == DataType::kInt64) return step + static_cast<double>(rank + 1) * 0x1p33;
  return IsInteger(type) ? step : step * 0.5;
}

// The unit roundoff 2^-p of the type (p: significand bits); 0 for the exact integer types. An
// average computed as the exact sum divided, then rounded at most twice (to float, then to a 2-byte
// type), has a relative error of at most twice this.
inline double UnitRoundoff(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return 0x1p-24;
    case DataType::kFloat64:
      return 0x1p-53;
    case DataType::kFloat16:
      return 0x1p-11;
    case DataType::kBFloat16:
      return 0x1p-8;
    case DataType::kInt32:
    case DataType::kInt64:
      break;
  }
  return 0;
}

// The float64 references of `count` elements over `size` ranks: each element's sum, min and max
// over the ranks' inputs, and the sum of their magnitudes, the scale of the rounding errors of an
// average that a backend computes by scaling each input before summing (NCCL's ncclAvg).
struct References {
  References(DataType type, int size, size_t count) : sum(count), min(count), max(count), magnitude(count) {
    for (size_t i = 0; i < count; ++i) {
      min[i] = INFINITY;
      max[i] = -INFINITY;
      for (int rank = 0; rank < size; ++rank) {
        const double value = InputValue(type, rank, i);
        sum[i] += value;
        min[i] = std::fmin(min[i], value);
        max[i] = std::fmax(max[i], value);
        magnitude[i] += std::fabs(value);
      }
    }
  }

  // Element i's reference for `op` (integer averages truncated toward zero).
  double Of(DataType type, ReduceOp op, int size, size_t i) const {
    switch (op) {
      case ReduceOp::kSum:
        return sum[i];
      case ReduceOp::kMin:
        return min[i];
      case ReduceOp::kMax:
        return max[i];
      case ReduceOp::kProduct:  // ProductOfEveryTypeAndPlacement computes its own
        return NAN;
      case ReduceOp::kAverage:
        break;
    }
    const double average = sum[i] / size;
    return IsInteger(type) ? std::trunc(average) : average;
  }

  std::vector<double> sum;
  std::vector<double> min;
  std::vector<double> max;
  std::vector<double> magnitude;
};

// The host bytes of `rank`'s input: `count` elements of `type`.
inline std::vector<char> Inputs(DataType type, int rank, size_t count) {
  std::vector<double> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = InputValue(type, rank, i);
  std::vector<char> bytes(count * DataTypeSize(type));
  ConvertFromDouble(type, values.data(), bytes.data(), count);
  return bytes;
}

template <typename T>
std::vector<char> BytesOf(const std::vector<T>& values) {
  std::vector<char> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> ValuesOf(const std::vector<char>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

inline std::string Describe(DataType type, size_t count) {
  return std::string(DataTypeName(type)) + " count " + std::to_string(count);
}

}  // namespace hvdrun::testing

#endif  // HVDRUN_RUNTIME_BACKEND_CONFORMANCE_VALUES_H_
