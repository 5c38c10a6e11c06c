#include "examples/bench/element_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/element_conversion.h"

namespace hvdrun {
namespace {

constexpr DataType kAllTypes[] = {DataType::kFloat32,  DataType::kFloat64, DataType::kFloat16,
                                  DataType::kBFloat16, DataType::kInt32,   DataType::kInt64};

// Values on every side of the 2-byte formats' limits: whole numbers, halfway ties (rounding to even
// up and down), subnormals, the largest finite values and what rounds beyond them, signs and zeros.
std::vector<double> Probes() {
  std::vector<double> values = {0.0,
                                -0.0,
                                1.0,
                                -1.0,
                                7.0,
                                2047.0,
                                2049.0,
                                2051.0,
                                259.0,
                                257.0,
                                0.1,
                                -3.75,
                                65504.0,
                                65519.0,
                                65520.0,
                                1e6,
                                6.1e-5,
                                6e-8,
                                3e-8,
                                1e-9,
                                3.3895e38,
                                3.4e38,
                                -3.4e38,
                                123456.789,
                                1.5,
                                2.5,
                                -2.5,
                                1e-40,
                                std::ldexp(1.0, -14),
                                std::ldexp(1.0, -24)};
  for (int i = -300; i <= 300; ++i) values.push_back(i * 0.37);
  values.push_back(std::numeric_limits<double>::infinity());
  values.push_back(-std::numeric_limits<double>::infinity());
  return values;
}

// The benchmark's own encoding is libhvdrun's, bit for bit, and its decoding reads the runtime's values.
TEST(ElementCodecTest, EncodesAndDecodesAsTheRuntimeConverts) {
  const std::vector<double> values = Probes();
  for (DataType type : kAllTypes) {
    if (type == DataType::kInt32 || type == DataType::kInt64) continue;  // covered below: no infinities
    SCOPED_TRACE(DataTypeName(type));
    std::vector<char> expected(values.size() * DataTypeSize(type));
    ConvertFromDouble(type, values.data(), expected.data(), values.size());
    const std::vector<char> encoded = EncodeElements(type, values);
    ASSERT_EQ(encoded.size(), expected.size());
    for (size_t i = 0; i < values.size(); ++i) {
      const size_t size = DataTypeSize(type);
      EXPECT_EQ(std::memcmp(encoded.data() + i * size, expected.data() + i * size, size), 0)
          << "value " << values[i];
    }
    std::vector<double> decoded_expected(values.size());
    ConvertToDouble(type, expected.data(), decoded_expected.data(), values.size());
    const std::vector<double> decoded = DecodeElements(type, expected.data(), values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      if (std::isnan(decoded_expected[i])) {
        EXPECT_TRUE(std::isnan(decoded[i])) << "value " << values[i];
      } else {
        EXPECT_EQ(decoded[i], decoded_expected[i]) << "value " << values[i];
      }
    }
  }
}

TEST(ElementCodecTest, IntegersTruncateTowardZero) {
  const std::vector<double> values = {0, 1, -1, 2.9, -2.9, 1e9, -1e9, 123456.5};
  for (DataType type : {DataType::kInt32, DataType::kInt64}) {
    std::vector<char> expected(values.size() * DataTypeSize(type));
    ConvertFromDouble(type, values.data(), expected.data(), values.size());
    EXPECT_EQ(EncodeElements(type, values), expected) << DataTypeName(type);
    const std::vector<double> decoded = DecodeElements(type, expected.data(), values.size());
    for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(decoded[i], std::trunc(values[i]));
  }
}

TEST(ElementCodecTest, NanStaysNan) {
  const std::vector<double> values = {std::nan("")};
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}) {
    const std::vector<char> encoded = EncodeElements(type, values);
    EXPECT_TRUE(std::isnan(DecodeElements(type, encoded.data(), 1)[0])) << DataTypeName(type);
  }
}

}  // namespace
}  // namespace hvdrun
