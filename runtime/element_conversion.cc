#include "runtime/element_conversion.h"

#include <cstddef>

#include "hvdrun/types.h"
#include "runtime/reduction_kernels.h"

namespace hvdrun {

void ConvertFromDouble(DataType type, const double* from, void* to, size_t count) {
  WithElementType(type, [&]<typename T>() {
    using A = ElementArithmetic<T>;
    T* out = static_cast<T*>(to);
    for (size_t i = 0; i < count; ++i) {
      StoreElement(out + i, A::Narrow(static_cast<typename A::Compute>(from[i])));
    }
  });
}

void ConvertToDouble(DataType type, const void* from, double* to, size_t count) {
  WithElementType(type, [&]<typename T>() {
    using A = ElementArithmetic<T>;
    const T* in = static_cast<const T*>(from);
    for (size_t i = 0; i < count; ++i) to[i] = static_cast<double>(A::Widen(in[i]));
  });
}

}  // namespace hvdrun
