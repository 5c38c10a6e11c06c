// Reduction kernels: element-wise sum, min, max and product of hvdrun's element types on the CPU, and the
// division that turns a sum into an average, for every backend whose library lacks a type or an op
// (Gloo reduces everything with them; MPI reduces float16 and bfloat16 with them, through
// user-defined ops). One set, so that every backend rounds alike.
//
// A kernel is called as kernel(out, a, b, n): out[i] = a[i] op b[i] for n elements; out may alias
// a or b (gloo's convention; MPI's inout = in op inout is kernel(inout, in, inout, n)). float16 and
// bfloat16 are widened to float, combined, and rounded back to nearest-even at every step, as gloo's
// own float16 sum does; integer averages truncate toward zero. float16 is gloo's storage type and
// conversions (<gloo/types.h>, header-only; Gloo is a dependency of every libhvdrun build).
// Everything here is pure and thread-safe.
#ifndef HVDRUN_RUNTIME_REDUCTION_KERNELS_H_
#define HVDRUN_RUNTIME_REDUCTION_KERNELS_H_

#include <gloo/types.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "hvdrun/types.h"
#include "runtime/bfloat16.h"

namespace hvdrun {

using ReductionKernel = void (*)(void* out, const void* a, const void* b, size_t n);

// The kernel for `op` over `type`; kAverage reduces by the sum, which DivideBy then finishes.
ReductionKernel ReductionKernelFor(DataType type, ReduceOp op);

// values[i] /= divisor for `count` elements of `type`, in the type's arithmetic.
void DivideBy(DataType type, void* values, size_t count, int divisor);

// values[i] *= factor for `count` elements of `type`, as Horovod's engine scales its buffers on the CPU
// (its prescale and postscale factors): float32, float16 and bfloat16 times the factor rounded to float,
// in float; float64 in double; integers times the factor in double, truncated toward zero.
void ScaleBy(DataType type, void* values, size_t count, double factor);

// The arithmetic of an element type T: done in T itself, or in float for the 2-byte floats, which
// Narrow rounds back to nearest-even.
template <typename T>
struct ElementArithmetic {
  using Compute = T;
  static Compute Widen(T value) { return value; }
  static T Narrow(Compute value) { return value; }
};
template <>
struct ElementArithmetic<gloo::float16> {
  using Compute = float;
  static float Widen(gloo::float16 value) { return gloo::cpu_half2float(value); }
  static gloo::float16 Narrow(float value) { return gloo::cpu_float2half_rn(value); }
};
template <>
struct ElementArithmetic<BFloat16> {
  using Compute = float;
  static float Widen(BFloat16 value) { return value.ToFloat(); }
  static BFloat16 Narrow(float value) { return BFloat16::FromFloat(value); }
};

// Writes `value` into `*to`. Every element is stored through it: gloo::float16's copy assignment skips
// the write when the old bits, read as a whole number, round to the new value (its operator!=
// compares with the other's bits converted from an int), so an output that held 0x0002 kept it
// where 2.0 (0x4000) was written. Its bits are copied instead.
template <typename T>
void StoreElement(T* to, const T& value) {
  *to = value;
}
inline void StoreElement(gloo::float16* to, const gloo::float16& value) { to->x = value.x; }

// Calls body.template operator()<T>() with T the C++ type that holds an element of `type`
// (gloo::float16, BFloat16, float, double, int32_t, int64_t); throws std::invalid_argument for a
// value that is no DataType.
template <typename Body>
void WithElementType(DataType type, Body&& body) {
  switch (type) {
    case DataType::kFloat32:
      return body.template operator()<float>();
    case DataType::kFloat64:
      return body.template operator()<double>();
    case DataType::kFloat16:
      return body.template operator()<gloo::float16>();
    case DataType::kBFloat16:
      return body.template operator()<BFloat16>();
    case DataType::kInt32:
      return body.template operator()<int32_t>();
    case DataType::kInt64:
      return body.template operator()<int64_t>();
  }
  throw std::invalid_argument("unknown data type " + std::to_string(static_cast<int>(type)));
}

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_REDUCTION_KERNELS_H_
