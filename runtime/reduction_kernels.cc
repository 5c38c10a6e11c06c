#include "runtime/reduction_kernels.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "runtime/compression/wire_format.h"

namespace hvdrun {
namespace {

template <typename T, typename Combine>
void CombineElements(void* out, const void* a, const void* b, size_t n, Combine combine) {
  using A = ElementArithmetic<T>;
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) StoreElement(o + i, A::Narrow(combine(A::Widen(x[i]), A::Widen(y[i]))));
}

template <typename T>
void Sum(void* out, const void* a, const void* b, size_t n) {
  CombineElements<T>(out, a, b, n, [](auto x, auto y) { return static_cast<decltype(x)>(x + y); });
}

// float16 sums a block at a time through the wire format's vectorized conversions
// (runtime/compression/wire_format.h), which round as gloo's do (to nearest, ties to even; only a NaN's
// payload may differ): the element-wise path's scalar conversions make a float16 sum several times slower
// than a float32 one, and fp16 gradient compression sums float16 over Gloo.
template <>
void Sum<gloo::float16>(void* out, const void* a, const void* b, size_t n) {
  constexpr size_t kBlock = 1024;
  float sum[kBlock];
  const auto* x = static_cast<const uint16_t*>(a);
  const auto* y = static_cast<const uint16_t*>(b);
  auto* o = static_cast<uint16_t*>(out);
  for (size_t at = 0; at < n; at += kBlock) {
    const size_t count = std::min(kBlock, n - at);
    DecodeFromWire(WireFormat::kFloat16, x + at, count, 1.0f, sum);
    DecodeAddFromWire(WireFormat::kFloat16, y + at, count, 1.0f, sum);
    EncodeToWire(WireFormat::kFloat16, sum, count, 1.0f, o + at);
  }
}
template <typename T>
void Min(void* out, const void* a, const void* b, size_t n) {
  CombineElements<T>(out, a, b, n, [](auto x, auto y) { return std::min(x, y); });
}
template <typename T>
void Max(void* out, const void* a, const void* b, size_t n) {
  CombineElements<T>(out, a, b, n, [](auto x, auto y) { return std::max(x, y); });
}
// Integers multiply as unsigned, which wraps around modulo 2^bits as MPI_PROD and ncclProd do in
// practice, where a signed overflow would be undefined.
template <typename T>
void Product(void* out, const void* a, const void* b, size_t n) {
  CombineElements<T>(out, a, b, n, [](auto x, auto y) {
    using C = decltype(x);
    if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      return static_cast<C>(static_cast<U>(x) * static_cast<U>(y));
    } else {
      return static_cast<C>(x * y);
    }
  });
}

}  // namespace

ReductionKernel ReductionKernelFor(DataType type, ReduceOp op) {
  ReductionKernel kernel = nullptr;
  WithElementType(type, [&]<typename T>() {
    switch (op) {
      case ReduceOp::kMin:
        kernel = &Min<T>;
        return;
      case ReduceOp::kMax:
        kernel = &Max<T>;
        return;
      case ReduceOp::kProduct:
        kernel = &Product<T>;
        return;
      case ReduceOp::kSum:
      case ReduceOp::kAverage:
        break;
    }
    kernel = &Sum<T>;
  });
  return kernel;
}

void ScaleBy(DataType type, void* values, size_t count, double factor) {
  WithElementType(type, [&]<typename T>() {
    using A = ElementArithmetic<T>;
    using C = typename A::Compute;
    T* v = static_cast<T*>(values);
    if constexpr (std::is_integral_v<C>) {
      for (size_t i = 0; i < count; ++i) v[i] = static_cast<T>(static_cast<double>(v[i]) * factor);
    } else {
      const C f = static_cast<C>(factor);
      for (size_t i = 0; i < count; ++i) StoreElement(v + i, A::Narrow(static_cast<C>(A::Widen(v[i]) * f)));
    }
  });
}

void DivideBy(DataType type, void* values, size_t count, int divisor) {
  WithElementType(type, [&]<typename T>() {
    using A = ElementArithmetic<T>;
    using C = typename A::Compute;
    T* v = static_cast<T*>(values);
    const C d = static_cast<C>(divisor);
    for (size_t i = 0; i < count; ++i) StoreElement(v + i, A::Narrow(static_cast<C>(A::Widen(v[i]) / d)));
  });
}

}  // namespace hvdrun
