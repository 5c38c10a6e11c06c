// The libhvdrun element type of a tensor, for handing its memory to a collective.
#ifndef HVDRUN_EXAMPLES_TRAINER_TENSOR_DATA_TYPE_H_
#define HVDRUN_EXAMPLES_TRAINER_TENSOR_DATA_TYPE_H_

#include <ATen/core/Tensor.h>

#include <optional>

#include "hvdrun/types.h"

namespace hvdrun::trainer {

// float32, float64, float16, bfloat16, int32, int64; std::nullopt for any other scalar type.
std::optional<DataType> TensorDataType(const at::Tensor& tensor);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_TENSOR_DATA_TYPE_H_
