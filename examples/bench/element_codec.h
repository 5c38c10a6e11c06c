// hvdrun-bench's buffers in every element type its --dtype names (hvdrun/types.h), filled from and
// read back into doubles.
//
// The benchmark's own, as examples/shared's helpers are: it builds against libhvdrun's public
// headers only, and libhvdrun's API converts nothing. Encoding rounds to nearest even, as
// libhvdrun's reductions do (float16 and bfloat16 through float, integers truncated toward zero), and
// decoding is exact, so that a result checked here reads as the runtime left it. Pure and
// thread-safe.
#ifndef HVDRUN_EXAMPLES_BENCH_ELEMENT_CODEC_H_
#define HVDRUN_EXAMPLES_BENCH_ELEMENT_CODEC_H_

#include <cstddef>
#include <vector>

#include "hvdrun/types.h"

namespace hvdrun {

// `values` as `type`'s elements, in values.size() * DataTypeSize(type) bytes.
std::vector<char> EncodeElements(DataType type, const std::vector<double>& values);
// The `count` elements of `type` at `bytes`, as doubles.
std::vector<double> DecodeElements(DataType type, const char* bytes, size_t count);

}  // namespace hvdrun

#endif  // HVDRUN_EXAMPLES_BENCH_ELEMENT_CODEC_H_
