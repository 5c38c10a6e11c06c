// Element-wise reductions handed to gloo's allreduce, per element type, and the division that
// turns a sum into an average.
//
// gloo calls a reduction as fn(out, a, b, n): out[i] = a[i] op b[i], where out may alias a or b.
// float16 and bfloat16 are widened to float, combined, and rounded back (to nearest-even) at
// every step, as gloo's own float16 sum does. Integer averages truncate toward zero.
#ifndef HVDRUN_RUNTIME_BACKENDS_GLOO_GLOO_REDUCE_H_
#define HVDRUN_RUNTIME_BACKENDS_GLOO_GLOO_REDUCE_H_

#include <gloo/types.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "hvdrun/types.h"
#include "runtime/bfloat16.h"

namespace hvdrun::gloo_reduce {

using ReduceFunction = void (*)(void*, const void*, const void*, size_t);

// The type arithmetic is done in: the element type itself, or float for the 2-byte floats.
template <typename T>
struct Arithmetic {
  using Compute = T;
  static Compute Widen(T value) { return value; }
  static T Narrow(Compute value) { return value; }
};
template <>
struct Arithmetic<gloo::float16> {
  using Compute = float;
  static float Widen(gloo::float16 value) { return gloo::cpu_half2float(value); }
  static gloo::float16 Narrow(float value) { return gloo::cpu_float2half_rn(value); }
};
template <>
struct Arithmetic<BFloat16> {
  using Compute = float;
  static float Widen(BFloat16 value) { return value.ToFloat(); }
  static BFloat16 Narrow(float value) { return BFloat16::FromFloat(value); }
};

template <typename T, typename Combine>
void Combine2(void* out, const void* a, const void* b, size_t n, Combine combine) {
  using A = Arithmetic<T>;
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) o[i] = A::Narrow(combine(A::Widen(x[i]), A::Widen(y[i])));
}

template <typename T>
void Sum(void* out, const void* a, const void* b, size_t n) {
  Combine2<T>(out, a, b, n, [](auto x, auto y) { return static_cast<decltype(x)>(x + y); });
}
template <typename T>
void Min(void* out, const void* a, const void* b, size_t n) {
  Combine2<T>(out, a, b, n, [](auto x, auto y) { return std::min(x, y); });
}
template <typename T>
void Max(void* out, const void* a, const void* b, size_t n) {
  Combine2<T>(out, a, b, n, [](auto x, auto y) { return std::max(x, y); });
}

// The reduction for `op`; kAverage reduces by Sum and is finished by DivideBy.
template <typename T>
ReduceFunction For(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMin:
      return &Min<T>;
    case ReduceOp::kMax:
      return &Max<T>;
    case ReduceOp::kSum:
    case ReduceOp::kAverage:
      break;
  }
  return &Sum<T>;
}

// values[i] /= divisor, in the type's arithmetic (integers: truncated toward zero).
template <typename T>
void DivideBy(T* values, size_t n, int divisor) {
  using A = Arithmetic<T>;
  using C = typename A::Compute;
  const C d = static_cast<C>(divisor);
  for (size_t i = 0; i < n; ++i) values[i] = A::Narrow(static_cast<C>(A::Widen(values[i]) / d));
}

}  // namespace hvdrun::gloo_reduce

#endif  // HVDRUN_RUNTIME_BACKENDS_GLOO_GLOO_REDUCE_H_
