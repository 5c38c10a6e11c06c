// The per-rank inputs and float64 references that every backend's collective tests share (Gloo's
// threads over TCP, MPI's processes under mpirun, NCCL's threads on GPUs), and element access for
// any DataType as double. For tests only.
//
// Inputs are multiples of 0.5 in [-8, 8] (integer types: whole numbers, and int64 adds a multiple
// of 2^33 so that a 32-bit truncation would show), so that every partial sum of up to four ranks
// is exactly representable in every type, float16 and bfloat16 included: sum, min and max must
// then match the float64 reference exactly, whatever order a backend adds in.
#ifndef HVDRUN_RUNTIME_COLLECTIVE_TEST_VALUES_H_
#define HVDRUN_RUNTIME_COLLECTIVE_TEST_VALUES_H_

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "hvdrun/types.h"

namespace hvdrun::testing {

// Element i of `buffer` set to / read as double, with the conversions of hvdrun/types.h (float16
// and bfloat16 round to nearest even, integers truncate toward zero).
inline void StoreElement(DataType type, void* buffer, size_t i, double value) {
  ConvertFromDouble(type, &value, static_cast<char*>(buffer) + i * DataTypeSize(type), 1);
}

inline double LoadElement(DataType type, const void* buffer, size_t i) {
  double value = 0;
  ConvertToDouble(type, static_cast<const char*>(buffer) + i * DataTypeSize(type), &value, 1);
  return value;
}

inline bool IsInteger(DataType type) { return type == DataType::kInt32 || type == DataType::kInt64; }

// Rank `rank`'s input element i.
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

// The float64 reference for element i over `size` ranks.
inline double Reference(DataType type, ReduceOp op, int size, size_t i) {
  double sum = 0;
  double min = INFINITY;
  double max = -INFINITY;
  for (int rank = 0; rank < size; ++rank) {
    const double value = InputValue(type, rank, i);
    sum += value;
    min = std::fmin(min, value);
    max = std::fmax(max, value);
  }
  switch (op) {
    case ReduceOp::kSum:
      return sum;
    case ReduceOp::kMin:
      return min;
    case ReduceOp::kMax:
      return max;
    case ReduceOp::kAverage:
      break;
  }
  const double average = sum / size;
  return IsInteger(type) ? std::trunc(average) : average;
}

// The sum over ranks of |input element i|: the scale of the rounding errors of an average that a
// backend computes by scaling each input before summing (NCCL's ncclAvg on floating types).
inline double MagnitudeSum(DataType type, int size, size_t i) {
  double magnitude = 0;
  for (int rank = 0; rank < size; ++rank) magnitude += std::fabs(InputValue(type, rank, i));
  return magnitude;
}

}  // namespace hvdrun::testing

#endif  // HVDRUN_RUNTIME_COLLECTIVE_TEST_VALUES_H_
