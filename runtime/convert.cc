// ConvertFromDouble and ConvertToDouble (hvdrun/types.h).
#include <gloo/types.h>

#include <cstdint>

#include "hvdrun/types.h"
#include "runtime/bfloat16.h"

namespace hvdrun {
namespace {

template <typename T>
void FromDouble(const double* from, void* to, size_t count) {
  T* out = static_cast<T*>(to);
  for (size_t i = 0; i < count; ++i) out[i] = static_cast<T>(from[i]);
}

template <typename T>
void ToDouble(const void* from, double* to, size_t count) {
  const T* in = static_cast<const T*>(from);
  for (size_t i = 0; i < count; ++i) to[i] = static_cast<double>(in[i]);
}

}  // namespace

void ConvertFromDouble(DataType type, const double* from, void* to, size_t count) {
  switch (type) {
    case DataType::kFloat32:
      return FromDouble<float>(from, to, count);
    case DataType::kFloat64:
      return FromDouble<double>(from, to, count);
    case DataType::kInt32:
      return FromDouble<int32_t>(from, to, count);
    case DataType::kInt64:
      return FromDouble<int64_t>(from, to, count);
    case DataType::kFloat16: {
      auto* out = static_cast<gloo::float16*>(to);
      for (size_t i = 0; i < count; ++i) out[i] = gloo::cpu_float2half_rn(static_cast<float>(from[i]));
      return;
    }
    case DataType::kBFloat16: {
      auto* out = static_cast<BFloat16*>(to);
      for (size_t i = 0; i < count; ++i) out[i] = BFloat16::FromFloat(static_cast<float>(from[i]));
      return;
    }
  }
}

void ConvertToDouble(DataType type, const void* from, double* to, size_t count) {
  switch (type) {
    case DataType::kFloat32:
      return ToDouble<float>(from, to, count);
    case DataType::kFloat64:
      return ToDouble<double>(from, to, count);
    case DataType::kInt32:
      return ToDouble<int32_t>(from, to, count);
    case DataType::kInt64:
      return ToDouble<int64_t>(from, to, count);
    case DataType::kFloat16: {
      const auto* in = static_cast<const gloo::float16*>(from);
      for (size_t i = 0; i < count; ++i) to[i] = gloo::cpu_half2float(in[i]);
      return;
    }
    case DataType::kBFloat16: {
      const auto* in = static_cast<const BFloat16*>(from);
      for (size_t i = 0; i < count; ++i) to[i] = in[i].ToFloat();
      return;
    }
  }
}

}  // namespace hvdrun
