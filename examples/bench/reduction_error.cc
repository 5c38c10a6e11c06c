#include "examples/bench/reduction_error.h"

#include <cmath>
#include <limits>

namespace hvdrun {

double ReductionError::Ratio(double error_squares, double exact_squares) {
  if (exact_squares > 0) return std::sqrt(error_squares / exact_squares);
  return error_squares > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

void ReductionError::AddTensor(std::string_view name, const float* got, const float* exact, size_t count) {
  double error_squares = 0;
  double exact_squares = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!std::isfinite(exact[i])) continue;
    if (!std::isfinite(got[i])) {
      ++nonfinite_;
      continue;
    }
    const double difference = static_cast<double>(got[i]) - static_cast<double>(exact[i]);
    error_squares += difference * difference;
    exact_squares += static_cast<double>(exact[i]) * static_cast<double>(exact[i]);
  }
  error_squares_ += error_squares;
  exact_squares_ += exact_squares;
  const double tensor_error = Ratio(error_squares, exact_squares);
  if (worst_tensor_.empty() || tensor_error > worst_tensor_error_) {
    worst_tensor_error_ = tensor_error;
    worst_tensor_ = std::string(name);
  }
}

}  // namespace hvdrun
