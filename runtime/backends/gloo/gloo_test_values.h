// Element access for the Gloo collective tests: any DataType's elements read and written as
// double, and the per-rank inputs the tests reduce. For tests only.
//
// Inputs are multiples of 0.5 in [-8, 8] (integer types: whole numbers, and int64 adds a multiple
// of 2^33 so that a 32-bit truncation would show), so that every partial sum of up to four ranks
// is exactly representable in every type, float16 and bfloat16 included: sum, min and max must
// then match the float64 reference exactly, whatever order gloo adds in.
#ifndef HVDRUN_RUNTIME_BACKENDS_GLOO_GLOO_TEST_VALUES_H_
#define HVDRUN_RUNTIME_BACKENDS_GLOO_GLOO_TEST_VALUES_H_

#include <gloo/types.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hvdrun/types.h"
#include "runtime/bfloat16.h"

namespace hvdrun::testing {

inline void StoreElement(DataType type, void* buffer, size_t i, double value) {
  switch (type) {
    case DataType::kFloat32:
      static_cast<float*>(buffer)[i] = static_cast<float>(value);
      return;
    case DataType::kFloat64:
      static_cast<double*>(buffer)[i] = value;
      return;
    case DataType::kFloat16:
      static_cast<gloo::float16*>(buffer)[i] = gloo::cpu_float2half_rn(static_cast<float>(value));
      return;
    case DataType::kBFloat16:
      static_cast<BFloat16*>(buffer)[i] = BFloat16::FromFloat(static_cast<float>(value));
      return;
    case DataType::kInt32:
      static_cast<int32_t*>(buffer)[i] = static_cast<int32_t>(value);
      return;
    case DataType::kInt64:
      static_cast<int64_t*>(buffer)[i] = static_cast<int64_t>(value);
      return;
  }
}

inline double LoadElement(DataType type, const void* buffer, size_t i) {
  switch (type) {
    case DataType::kFloat32:
      return static_cast<const float*>(buffer)[i];
    case DataType::kFloat64:
      return static_cast<const double*>(buffer)[i];
    case DataType::kFloat16:
      return gloo::cpu_half2float(static_cast<const gloo::float16*>(buffer)[i]);
    case DataType::kBFloat16:
      return static_cast<const BFloat16*>(buffer)[i].ToFloat();
    case DataType::kInt32:
      return static_cast<const int32_t*>(buffer)[i];
    case DataType::kInt64:
      return static_cast<double>(static_cast<const int64_t*>(buffer)[i]);
  }
  return 0;
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
// average is the exact sum divided, then rounded at most twice (to float, then to a 2-byte type):
// its relative error is at most twice this.
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

}  // namespace hvdrun::testing

#endif  // HVDRUN_RUNTIME_BACKENDS_GLOO_GLOO_TEST_VALUES_H_
