#include "runtime/bfloat16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace hvdrun {
namespace {

TEST(DataTypeBFloat16Test, ExactValuesRoundTrip) {
  for (float value : {0.0F, 1.0F, -2.5F, 256.0F, 0.0078125F, -65280.0F}) {
    EXPECT_EQ(BFloat16::FromFloat(value).ToFloat(), value);
  }
}

TEST(DataTypeBFloat16Test, RoundsToNearestEven) {
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even mantissa, 1.
  EXPECT_EQ(BFloat16::FromFloat(1.0F + 0x1p-8F).ToFloat(), 1.0F);
  // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: ties go to 1 + 2^-6.
  EXPECT_EQ(BFloat16::FromFloat(1.0F + 3 * 0x1p-8F).ToFloat(), 1.0F + 0x1p-6F);
  // Just above the halfway point rounds up.
  EXPECT_EQ(BFloat16::FromFloat(1.0F + 0x1p-8F + 0x1p-20F).ToFloat(), 1.0F + 0x1p-7F);
  EXPECT_EQ(BFloat16::FromFloat(-(1.0F + 0x1p-8F + 0x1p-20F)).ToFloat(), -(1.0F + 0x1p-7F));
}

TEST(DataTypeBFloat16Test, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(BFloat16::FromFloat(inf).ToFloat(), inf);
  EXPECT_EQ(BFloat16::FromFloat(-inf).ToFloat(), -inf);
  EXPECT_TRUE(std::isnan(BFloat16::FromFloat(std::numeric_limits<float>::quiet_NaN()).ToFloat()));
  // A NaN whose payload lives only in the low bits must not round to infinity.
  EXPECT_TRUE(std::isnan(BFloat16::FromFloat(std::bit_cast<float>(0x7f800001U)).ToFloat()));
  EXPECT_TRUE(std::signbit(BFloat16::FromFloat(-0.0F).ToFloat()));
  // The largest float rounds up to infinity, as IEEE rounding does.
  EXPECT_EQ(BFloat16::FromFloat(std::numeric_limits<float>::max()).ToFloat(), inf);
  EXPECT_EQ(BFloat16::FromFloat(1.0F).bits, 0x3f80);
}

}  // namespace
}  // namespace hvdrun
