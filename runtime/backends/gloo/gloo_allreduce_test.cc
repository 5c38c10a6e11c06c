// Allreduce over the Gloo backend: every world size 1..4 x every data type x every reduce op x
// element counts 0, 1, 7 and 1,000,003, in place and out of place, each rank a thread with its own
// Runtime over TCP on 127.0.0.1, checked against a float64 reference (runtime/collective_test_values.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <tuple>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/collective_test_values.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

using testing::InputValue;
using testing::LoadElement;
using testing::Reference;
using testing::StoreElement;

constexpr ReduceOp kAllReduceOps[] = {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMin, ReduceOp::kMax};
constexpr size_t kCounts[] = {0, 1, 7, 1'000'003};

// Fills `count` elements of rank's input, runs the allreduce, and checks every element.
void CheckAllreduce(Runtime& runtime, DataType type, ReduceOp op, size_t count, bool in_place) {
  const size_t bytes = count * DataTypeSize(type);
  std::vector<char> send(bytes);
  std::vector<char> recv(bytes);
  for (size_t i = 0; i < count; ++i) StoreElement(type, send.data(), i, InputValue(type, runtime.rank(), i));
  const std::vector<char> original = in_place ? std::vector<char>() : send;
  void* output = in_place ? send.data() : recv.data();
  Status status = runtime.Allreduce(send.data(), output, count, type, op);
  ASSERT_TRUE(status.ok()) << status.message();

  const double bound = 2 * testing::UnitRoundoff(type);
  size_t failures = 0;
  for (size_t i = 0; i < count && failures < 5; ++i) {
    const double expected = Reference(type, op, runtime.size(), i);
    const double got = LoadElement(type, output, i);
    const bool exact = op != ReduceOp::kAverage || bound == 0;
    const bool good = exact ? got == expected : std::fabs(got - expected) <= bound * std::fabs(expected);
    if (!good) {
      ++failures;
      ADD_FAILURE() << DataTypeName(type) << " " << ReduceOpName(op) << " size " << runtime.size()
                    << " count " << count << (in_place ? " in place" : " out of place") << " rank "
                    << runtime.rank() << ": element " << i << " is " << got << ", expected " << expected;
    }
  }
  if (!in_place) {
    EXPECT_TRUE(send == original) << "the input of an out-of-place allreduce changed";
  }
}

class GlooAllreduceTest : public ::testing::TestWithParam<std::tuple<int, DataType>> {};

TEST_P(GlooAllreduceTest, EveryOpCountAndPlacement) {
  const auto [size, type] = GetParam();
  testing::RunRanks(size, [type = type](Runtime& runtime) {
    for (ReduceOp op : kAllReduceOps) {
      for (size_t count : kCounts) {
        for (bool in_place : {true, false}) CheckAllreduce(runtime, type, op, count, in_place);
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Gloo, GlooAllreduceTest,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4),
                                            ::testing::Values(DataType::kFloat32, DataType::kFloat64,
                                                              DataType::kFloat16, DataType::kBFloat16,
                                                              DataType::kInt32, DataType::kInt64)),
                         [](const ::testing::TestParamInfo<std::tuple<int, DataType>>& param_info) {
                           return "size" + std::to_string(std::get<0>(param_info.param)) + "_" +
                                  std::string(DataTypeName(std::get<1>(param_info.param)));
                         });

TEST(GlooAllreduceCasesTest, AverageOfIntegersTruncatesTowardZero) {
  testing::RunRanks(2, [](Runtime& runtime) {
    // Sums -7, 7, -1, 1 over two ranks: averages -3.5 -> -3, 3.5 -> 3, -0.5 -> 0, 0.5 -> 0.
    std::vector<int32_t> small =
        runtime.rank() == 0 ? std::vector<int32_t>{-4, 4, -1, 1} : std::vector<int32_t>{-3, 3, 0, 0};
    ASSERT_TRUE(runtime.Allreduce(small.data(), small.data(), 4, DataType::kInt32, ReduceOp::kAverage).ok());
    EXPECT_EQ(small, (std::vector<int32_t>{-3, 3, 0, 0}));
    std::vector<int64_t> large = {runtime.rank() == 0 ? -(int64_t{1} << 40) - 1 : -(int64_t{1} << 40)};
    ASSERT_TRUE(runtime.Allreduce(large.data(), large.data(), 1, DataType::kInt64, ReduceOp::kAverage).ok());
    EXPECT_EQ(large[0], -(int64_t{1} << 40));
  });
}

TEST(GlooAllreduceCasesTest, Float32RandomValuesWithinTheRoundingBound) {
  // Values that are not exactly representable: the result may differ from the float64 reference by
  // the rounding of (size - 1) additions, each at most 2^-24 of the running sum of magnitudes.
  constexpr size_t kCount = 4099;
  testing::RunRanks(4, [](Runtime& runtime) {
    auto value = [](int rank, size_t i) {
      return static_cast<float>(std::sin(static_cast<double>(i) * 0.37 + rank) * 1000.0);
    };
    std::vector<float> data(kCount);
    for (size_t i = 0; i < kCount; ++i) data[i] = value(runtime.rank(), i);
    ASSERT_TRUE(runtime.Allreduce(data.data(), data.data(), kCount, DataType::kFloat32, ReduceOp::kSum).ok());
    for (size_t i = 0; i < kCount; ++i) {
      double sum = 0;
      double magnitude = 0;
      for (int rank = 0; rank < runtime.size(); ++rank) {
        sum += value(rank, i);
        magnitude += std::fabs(value(rank, i));
      }
      ASSERT_NEAR(data[i], sum, (runtime.size() - 1) * 0x1p-24 * magnitude + 1e-30) << "element " << i;
    }
  });
}

TEST(GlooAllreduceCasesTest, BaselineIsGlooSum) {
  testing::RunRanks(3, [](Runtime& runtime) {
    std::vector<float> floats(1001, static_cast<float>(runtime.rank() + 1));
    ASSERT_TRUE(
        runtime.BaselineAllreduce(floats.data(), floats.size(), DataType::kFloat32, ReduceOp::kSum).ok());
    EXPECT_EQ(floats, std::vector<float>(1001, 6.0F));
    std::vector<double> doubles(17, 0.5 * runtime.rank());
    ASSERT_TRUE(
        runtime.BaselineAllreduce(doubles.data(), doubles.size(), DataType::kFloat64, ReduceOp::kSum).ok());
    EXPECT_EQ(doubles, std::vector<double>(17, 1.5));
    // The runtime's own queue still works after a baseline call.
    ASSERT_TRUE(
        runtime.Allreduce(doubles.data(), doubles.data(), 17, DataType::kFloat64, ReduceOp::kMax).ok());
    EXPECT_EQ(doubles, std::vector<double>(17, 1.5));
  });
}

}  // namespace
}  // namespace hvdrun
