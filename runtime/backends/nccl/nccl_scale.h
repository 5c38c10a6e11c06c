// Division of a device buffer on a CUDA stream: the second half of an average over NCCL libraries
// that have no ncclAvg (before 2.10), after an ncclSum on the same stream. Multiplication by a factor
// (ScaleOnStream): Horovod's prescale and postscale factors, as the host's ScaleBy computes them.
//
// Floating types are divided (float16 and bfloat16 in float32, rounded once back); integers are
// divided truncating toward zero, as C++ and the other backends divide. Enqueues one kernel and
// returns its launch error; the caller waits on the stream.
#ifndef HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_SCALE_H_
#define HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_SCALE_H_

#include <cuda_runtime_api.h>

#include <cstddef>

#include "hvdrun/types.h"

namespace hvdrun {

cudaError_t DivideOnStream(void* values, size_t count, DataType type, int divisor, cudaStream_t stream);

// values[i] *= factor: float32, float16 and bfloat16 times the factor rounded to float, in float;
// float64 in double; integers times the factor in double, truncated toward zero.
cudaError_t ScaleOnStream(void* values, size_t count, DataType type, double factor, cudaStream_t stream);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_SCALE_H_
