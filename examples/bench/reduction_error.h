// ReductionError: how far a compressed allreduce's results are from the exact float32 result of the
// same inputs, tensor by tensor, as hvdrun-bench --replay --compression reports it.
//
// The measures are norm-wise, because gradients are: an element whose exact value is near zero
// (two ranks' values that cancel) has an unbounded relative error under any rounding, so per
// element ratios say nothing. For the whole gradient, relative_error() = ‖got − exact‖₂ / ‖exact‖₂
// over every element added; for each tensor the same ratio, of which worst_tensor_error() is the
// largest (a layer whose gradients are small loses most in a format with few exponent bits). Results
// that are NaN or infinite where the exact value is finite are counted in nonfinite() and left out of
// the norms, as are elements whose exact value is not finite. Not thread-safe; a value type.
#ifndef HVDRUN_EXAMPLES_BENCH_REDUCTION_ERROR_H_
#define HVDRUN_EXAMPLES_BENCH_REDUCTION_ERROR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hvdrun {

class ReductionError {
 public:
  // Adds one tensor: `got[i]` against `exact[i]`, for `count` elements.
  void AddTensor(std::string_view name, const float* got, const float* exact, size_t count);

  // ‖got − exact‖₂ / ‖exact‖₂ over every tensor added: 0 when they are equal (or nothing was added),
  // infinity when the exact values are all zero and the results are not.
  double relative_error() const { return Ratio(error_squares_, exact_squares_); }
  // The largest of the tensors' relative errors, and that tensor's name (empty before any tensor).
  double worst_tensor_error() const { return worst_tensor_error_; }
  const std::string& worst_tensor() const { return worst_tensor_; }
  uint64_t nonfinite() const { return nonfinite_; }

 private:
  static double Ratio(double error_squares, double exact_squares);

  double error_squares_ = 0;
  double exact_squares_ = 0;
  double worst_tensor_error_ = 0;
  std::string worst_tensor_;
  uint64_t nonfinite_ = 0;
};

}  // namespace hvdrun

#endif  // HVDRUN_EXAMPLES_BENCH_REDUCTION_ERROR_H_
