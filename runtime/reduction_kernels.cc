#include "runtime/reduction_kernels.h"

#include <algorithm>

namespace hvdrun {
namespace {

template <typename T, typename Combine>
void CombineElements(void* out, const void* a, const void* b, size_t n, Combine combine) {
  using A = ElementArithmetic<T>;
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) o[i] = A::Narrow(combine(A::Widen(x[i]), A::Widen(y[i])));
}

template <typename T>
void Sum(void* out, const void* a, const void* b, size_t n) {
  CombineElements<T>(out, a, b, n, [](auto x, auto y) { return static_cast<decltype(x)>(x + y); });
}
template <typename T>
void Min(void* out, const void* a, const void* b, size_t n) {
  CombineElements<T>(out, a, b, n, [](auto x, auto y) { return std::min(x, y); });
}
template <typename T>
void Max(void* out, const void* a, const void* b, size_t n) {
  CombineElements<T>(out, a, b, n, [](auto x, auto y) { return std::max(x, y); });
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
      case ReduceOp::kSum:
      case ReduceOp::kAverage:
        break;
    }
    kernel = &Sum<T>;
  });
  return kernel;
}

void DivideBy(DataType type, void* values, size_t count, int divisor) {
  WithElementType(type, [&]<typename T>() {
    using A = ElementArithmetic<T>;
    using C = typename A::Compute;
    T* v = static_cast<T*>(values);
    const C d = static_cast<C>(divisor);
    for (size_t i = 0; i < count; ++i) v[i] = A::Narrow(static_cast<C>(A::Widen(v[i]) / d));
  });
}

}  // namespace hvdrun
