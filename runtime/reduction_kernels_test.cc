#include "runtime/reduction_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/element_conversion.h"

namespace hvdrun {
namespace {

constexpr DataType kAllTypes[] = {DataType::kFloat32,  DataType::kFloat64, DataType::kFloat16,
                                  DataType::kBFloat16, DataType::kInt32,   DataType::kInt64};

// `values` in `type`'s representation.
std::vector<char> Elements(DataType type, const std::vector<double>& values) {
  std::vector<char> bytes(values.size() * DataTypeSize(type));
  ConvertFromDouble(type, values.data(), bytes.data(), values.size());
  return bytes;
}

std::vector<double> Values(DataType type, const std::vector<char>& bytes) {
  std::vector<double> values(bytes.size() / DataTypeSize(type));
  ConvertToDouble(type, bytes.data(), values.data(), values.size());
  return values;
}

// kernel(a, b) for every type, into a separate output and in place over either input.
std::vector<double> Reduce(DataType type, ReduceOp op, const std::vector<double>& a,
                           const std::vector<double>& b) {
  const ReductionKernel kernel = ReductionKernelFor(type, op);
  const std::vector<char> x = Elements(type, a);
  const std::vector<char> y = Elements(type, b);
  std::vector<char> out(x.size());
  kernel(out.data(), x.data(), y.data(), a.size());
  std::vector<char> over_a = x;
  kernel(over_a.data(), over_a.data(), y.data(), a.size());
  std::vector<char> over_b = y;
  kernel(over_b.data(), x.data(), over_b.data(), a.size());
  EXPECT_EQ(over_a, out) << DataTypeName(type) << " " << ReduceOpName(op) << ": out aliasing a";
  EXPECT_EQ(over_b, out) << DataTypeName(type) << " " << ReduceOpName(op) << ": out aliasing b";
  return Values(type, out);
}

TEST(ReductionKernelsTest, SumMinAndMaxOfEveryType) {
  const std::vector<double> a = {1, -2, 3.5, 0, -8, 100};
  const std::vector<double> b = {2, -3, -3.5, 0, 7.5, -28};
  for (DataType type : kAllTypes) {
    const bool integer = type == DataType::kInt32 || type == DataType::kInt64;
    // Integer inputs are the values truncated: 3.5 -> 3, 7.5 -> 7.
    const std::vector<double> sum =
        integer ? std::vector<double>{3, -5, 0, 0, -1, 72} : std::vector<double>{3, -5, 0, 0, -0.5, 72};
    const std::vector<double> min =
        integer ? std::vector<double>{1, -3, -3, 0, -8, -28} : std::vector<double>{1, -3, -3.5, 0, -8, -28};
    const std::vector<double> max =
        integer ? std::vector<double>{2, -2, 3, 0, 7, 100} : std::vector<double>{2, -2, 3.5, 0, 7.5, 100};
    EXPECT_EQ(Reduce(type, ReduceOp::kSum, a, b), sum) << DataTypeName(type);
    EXPECT_EQ(Reduce(type, ReduceOp::kAverage, a, b), sum) << DataTypeName(type) << ": an average sums";
    EXPECT_EQ(Reduce(type, ReduceOp::kMin, a, b), min) << DataTypeName(type);
    EXPECT_EQ(Reduce(type, ReduceOp::kMax, a, b), max) << DataTypeName(type);
  }
}

TEST(ReductionKernelsTest, TwoByteFloatsRoundToNearestEvenAtEveryStep) {
  // float16 has 11 significant bits: 2048 + 1 is a tie, rounded to the even 2048; 2048 + 3 to 2052.
  EXPECT_EQ(Reduce(DataType::kFloat16, ReduceOp::kSum, {2048, 2048, 2050}, {1, 3, 1}),
            (std::vector<double>{2048, 2052, 2052}));
  // bfloat16 has 8: 256 + 1 rounds to 256, 256 + 3 to 260, 258 + 1 to 260.
  EXPECT_EQ(Reduce(DataType::kBFloat16, ReduceOp::kSum, {256, 256, 258}, {1, 3, 1}),
            (std::vector<double>{256, 260, 260}));
  // Past the largest float16 (65504) the sum is infinite, as gloo's own float16 sum makes it.
  EXPECT_EQ(Reduce(DataType::kFloat16, ReduceOp::kSum, {65504}, {65504}), (std::vector<double>{HUGE_VAL}));
}

TEST(ReductionKernelsTest, DivisionFinishesAnAverageInTheTypesArithmetic) {
  for (DataType type : kAllTypes) {
    std::vector<char> values = Elements(type, {-7, 7, -1, 1, 9, 0});
    DivideBy(type, values.data(), 6, 2);
    const bool integer = type == DataType::kInt32 || type == DataType::kInt64;
    // Integers truncate toward zero.
    const std::vector<double> half =
        integer ? std::vector<double>{-3, 3, 0, 0, 4, 0} : std::vector<double>{-3.5, 3.5, -0.5, 0.5, 4.5, 0};
    EXPECT_EQ(Values(type, values), half) << DataTypeName(type);
  }
  // float16: 1 / 3 rounds to the nearest float16, not to the nearest float.
  std::vector<char> third = Elements(DataType::kFloat16, {1});
  DivideBy(DataType::kFloat16, third.data(), 1, 3);
  EXPECT_EQ(Values(DataType::kFloat16, third)[0], 0.333251953125);
  // int64 keeps all 64 bits.
  std::vector<int64_t> large = {(int64_t{1} << 62) + 1};
  DivideBy(DataType::kInt64, large.data(), 1, 1);
  EXPECT_EQ(large[0], (int64_t{1} << 62) + 1);
}

TEST(ReductionKernelsTest, ProductOfEveryTypeWrapsIntegersAround) {
  for (DataType type : kAllTypes) {
    EXPECT_EQ(Reduce(type, ReduceOp::kProduct, {-2, 1, 3, 0, 16}, {4, -2, -1, 8, 16}),
              (std::vector<double>{-8, -2, -3, 0, 256}))
        << DataTypeName(type);
  }
  std::vector<int32_t> wraps = {int32_t{1} << 30};
  const std::vector<int32_t> two = {4};
  ReductionKernelFor(DataType::kInt32, ReduceOp::kProduct)(wraps.data(), wraps.data(), two.data(), 1);
  EXPECT_EQ(wraps[0], 0);  // 2^32 modulo 2^32, as MPI_PROD and ncclProd in practice
}

TEST(ReductionKernelsTest, ScalingIsHorovodsCpuArithmetic) {
  for (DataType type : kAllTypes) {
    std::vector<char> values = Elements(type, {-3, 3, 5, 0});
    ScaleBy(type, values.data(), 4, 0.5);
    const bool integer = type == DataType::kInt32 || type == DataType::kInt64;
    // Integers: times the factor in double, truncated toward zero.
    EXPECT_EQ(Values(type, values),
              (integer ? std::vector<double>{-1, 1, 2, 0} : std::vector<double>{-1.5, 1.5, 2.5, 0}))
        << DataTypeName(type);
  }
  // float32 and the 2-byte floats: times the factor rounded to float (0.1 is 0.100000001490116...).
  std::vector<float> single = {10.0F};
  ScaleBy(DataType::kFloat32, single.data(), 1, 0.1);
  EXPECT_EQ(single[0], 10.0F * 0.1F);
  std::vector<double> twice = {10.0};
  ScaleBy(DataType::kFloat64, twice.data(), 1, 0.1);
  EXPECT_EQ(twice[0], 10.0 * 0.1);
  std::vector<char> third = Elements(DataType::kFloat16, {1});
  ScaleBy(DataType::kFloat16, third.data(), 1, 1.0 / 3.0);
  EXPECT_EQ(Values(DataType::kFloat16, third)[0], 0.333251953125);
}

// An output's old bits never decide whether a result is written. gloo::float16's assignment skips
// the write when the old bits, read as a whole number, round to the new value: an output holding
// 0x0002 kept it where max(1, 2) = 2.0 (0x4000) was due, and 0x0001 where min(1, 2) = 1.0 was.
TEST(ReductionKernelsTest, EveryResultIsWrittenWhateverTheOutputHeldBefore) {
  const std::vector<char> ones = Elements(DataType::kFloat16, std::vector<double>(17, 1));
  const std::vector<char> twos = Elements(DataType::kFloat16, std::vector<double>(17, 2));
  for (const auto& [op, expected, stale] :
       {std::tuple{ReduceOp::kMax, 2.0, uint16_t{2}}, std::tuple{ReduceOp::kMin, 1.0, uint16_t{1}},
        std::tuple{ReduceOp::kSum, 3.0, uint16_t{3}}}) {
    std::vector<uint16_t> out(17, stale);
    ReductionKernelFor(DataType::kFloat16, op)(out.data(), ones.data(), twos.data(), out.size());
    std::vector<char> bytes(reinterpret_cast<const char*>(out.data()),
                            reinterpret_cast<const char*>(out.data() + out.size()));
    EXPECT_EQ(Values(DataType::kFloat16, bytes), std::vector<double>(17, expected)) << ReduceOpName(op);
  }
  // The division and the conversion from double too: 4 / 2 over a 0x0002, and 2.0 over a 0x0002.
  std::vector<uint16_t> halves = {0x4400, 0x4400};  // 4.0
  DivideBy(DataType::kFloat16, halves.data(), 2, 2);
  EXPECT_EQ(halves, (std::vector<uint16_t>{0x4000, 0x4000}));
  std::vector<uint16_t> converted = {2, 2};
  const double two[] = {2, 2};
  ConvertFromDouble(DataType::kFloat16, two, converted.data(), 2);
  EXPECT_EQ(converted, (std::vector<uint16_t>{0x4000, 0x4000}));
}

TEST(ReductionKernelsTest, ElementTypesHaveTheSizeOfTheirDataType) {
  for (DataType type : kAllTypes) {
    size_t size = 0;
    WithElementType(type, [&size]<typename T>() { size = sizeof(T); });
    EXPECT_EQ(size, DataTypeSize(type)) << DataTypeName(type);
  }
  EXPECT_THROW(WithElementType(static_cast<DataType>(99), []<typename T>() {}), std::invalid_argument);
}

}  // namespace
}  // namespace hvdrun
