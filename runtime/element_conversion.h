// ConvertFromDouble and ConvertToDouble: values between double and an element type's
// representation, in the arithmetic of libhvdrun's reductions (runtime/reduction_kernels.h), for the
// programs that fill buffers and check results: the unit tests, the backend conformance cases
// (runtime/backend_conformance.h) and the programs that run them.
//
// Not part of libhvdrun.so: its own library (hvdrun_element_conversion, runtime/CMakeLists.txt) is
// linked into those programs. Pure and thread-safe.
#ifndef HVDRUN_RUNTIME_ELEMENT_CONVERSION_H_
#define HVDRUN_RUNTIME_ELEMENT_CONVERSION_H_

#include <cstddef>

#include "hvdrun/types.h"

namespace hvdrun {

// Converts `count` values between double and `type`'s representation: float16 and bfloat16 through
// float, rounded to nearest even; integers truncate toward zero.
void ConvertFromDouble(DataType type, const double* from, void* to, size_t count);
void ConvertToDouble(DataType type, const void* from, double* to, size_t count);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_ELEMENT_CONVERSION_H_
