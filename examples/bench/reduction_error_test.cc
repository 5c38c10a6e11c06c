#include "examples/bench/reduction_error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace hvdrun {
namespace {

TEST(ReductionError, EqualResultsHaveNoError) {
  ReductionError error;
  EXPECT_EQ(error.relative_error(), 0.0);
  EXPECT_EQ(error.worst_tensor(), "");
  const std::vector<float> exact = {1.5F, -2.0F, 0.0F};
  error.AddTensor("a", exact.data(), exact.data(), exact.size());
  EXPECT_EQ(error.relative_error(), 0.0);
  EXPECT_EQ(error.worst_tensor_error(), 0.0);
  EXPECT_EQ(error.worst_tensor(), "a");
  EXPECT_EQ(error.nonfinite(), 0U);
}

TEST(ReductionError, IsNormWiseOverTheWholeGradientAndNamesTheWorstTensor) {
  ReductionError error;
  // a: exact (3, 4), off by (0.3, 0.4): 10%. b: exact (0, 0.01), off by 0.01: 100%, but small.
  const std::vector<float> a_exact = {3.0F, 4.0F};
  const std::vector<float> a_got = {3.3F, 4.4F};
  const std::vector<float> b_exact = {0.0F, 0.01F};
  const std::vector<float> b_got = {0.0F, 0.0F};
  error.AddTensor("a", a_got.data(), a_exact.data(), 2);
  error.AddTensor("b", b_got.data(), b_exact.data(), 2);
  EXPECT_NEAR(error.relative_error(), std::sqrt((0.25 + 0.0001) / (25 + 0.0001)), 1e-6);
  EXPECT_NEAR(error.worst_tensor_error(), 1.0, 1e-6);
  EXPECT_EQ(error.worst_tensor(), "b");
}

TEST(ReductionError, NonFiniteResultsAreCountedNotSummed) {
  ReductionError error;
  const std::vector<float> exact = {70000.0F, 1.0F, std::numeric_limits<float>::infinity()};
  const std::vector<float> got = {std::numeric_limits<float>::infinity(), 1.0F,
                                  std::numeric_limits<float>::infinity()};
  error.AddTensor("overflowed", got.data(), exact.data(), exact.size());
  EXPECT_EQ(error.nonfinite(), 1U);
  EXPECT_TRUE(std::isfinite(error.relative_error()));
}

TEST(ReductionError, ResultsWhereTheExactOnesAreZeroAreAnInfiniteError) {
  ReductionError error;
  const std::vector<float> exact = {0.0F};
  const std::vector<float> got = {1e-30F};
  error.AddTensor("zero", got.data(), exact.data(), 1);
  EXPECT_TRUE(std::isinf(error.relative_error()));
}

}  // namespace
}  // namespace hvdrun
