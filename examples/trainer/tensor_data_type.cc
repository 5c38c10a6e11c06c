#include "examples/trainer/tensor_data_type.h"

namespace hvdrun::trainer {

std::optional<DataType> TensorDataType(const at::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case at::kFloat:
      return DataType::kFloat32;
    case at::kDouble:
      return DataType::kFloat64;
    case at::kHalf:
      return DataType::kFloat16;
    case at::kBFloat16:
      return DataType::kBFloat16;
    case at::kInt:
      return DataType::kInt32;
    case at::kLong:
      return DataType::kInt64;
    default:
      return std::nullopt;
  }
}

}  // namespace hvdrun::trainer
