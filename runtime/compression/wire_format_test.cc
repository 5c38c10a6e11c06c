#include "runtime/compression/wire_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace hvdrun {
namespace {

constexpr WireFormat kFormats[] = {WireFormat::kFloat16, WireFormat::kBFloat16, WireFormat::kFloat8E4M3,
                                   WireFormat::kFloat8E5M2};
constexpr float kInf = std::numeric_limits<float>::infinity();

// The reference: each format from its definition (sign, biased exponent, mantissa), values in
// double, encoding by searching the sorted finite values for the nearest. Slow and plain; the
// library's branch-free loops must agree with it bit for bit.
struct Spec {
  int exponent_bits;
  int mantissa_bits;
  bool saturating;     // fp8: beyond the largest finite value is that value
  bool ieee_specials;  // the all-ones exponent is infinity and NaN (E4M3 has only one NaN)
  uint32_t nan_code;   // the code a NaN input becomes (before its sign), bfloat16 aside
};

Spec SpecOf(WireFormat format) {
  switch (format) {
    case WireFormat::kFloat16:
      return {5, 10, false, true, 0x7e00};
    case WireFormat::kBFloat16:
      return {8, 7, false, true, 0x7fc0};
    case WireFormat::kFloat8E4M3:
      return {4, 3, true, false, 0x7f};
    case WireFormat::kFloat8E5M2:
      return {5, 2, true, true, 0x7f};
  }
  return {};
}

int Bits(const Spec& spec) { return 1 + spec.exponent_bits + spec.mantissa_bits; }
uint32_t SignBit(const Spec& spec) { return 1U << (Bits(spec) - 1); }

double ReferenceDecode(const Spec& spec, uint32_t code) {
  const int bias = (1 << (spec.exponent_bits - 1)) - 1;
  const uint32_t all_ones = (1U << spec.exponent_bits) - 1;
  const uint32_t mantissa = code & ((1U << spec.mantissa_bits) - 1);
  const uint32_t exponent = (code >> spec.mantissa_bits) & all_ones;
  const double sign = (code & SignBit(spec)) != 0 ? -1.0 : 1.0;
  if (spec.ieee_specials && exponent == all_ones) {
    return mantissa == 0 ? sign * std::numeric_limits<double>::infinity() : std::nan("");
  }
  if (!spec.ieee_specials && exponent == all_ones && mantissa == (1U << spec.mantissa_bits) - 1) {
    return std::nan("");
  }
  if (exponent == 0) return sign * std::ldexp(static_cast<double>(mantissa), 1 - bias - spec.mantissa_bits);
  return sign * std::ldexp(1.0 + std::ldexp(static_cast<double>(mantissa), -spec.mantissa_bits),
                           static_cast<int>(exponent) - bias);
}

// The largest finite non-negative code: below the all-ones exponent, or E4M3's 0x7e.
uint32_t LargestFiniteCode(const Spec& spec) {
  const uint32_t magnitude_codes = SignBit(spec);
  return spec.ieee_specials ? ((((1U << spec.exponent_bits) - 1) << spec.mantissa_bits) - 1)
                            : magnitude_codes - 2;
}

uint32_t ReferenceEncode(WireFormat format, float value) {
  const Spec spec = SpecOf(format);
  const uint32_t sign = std::signbit(value) ? SignBit(spec) : 0;
  if (std::isnan(value)) {
    if (format == WireFormat::kBFloat16) return (std::bit_cast<uint32_t>(value) >> 16) | 0x40;
    return spec.nan_code | sign;
  }
  const double magnitude = std::fabs(static_cast<double>(value));
  const uint32_t largest = LargestFiniteCode(spec);
  const double largest_value = ReferenceDecode(spec, largest);
  if (magnitude > largest_value) {
    if (spec.saturating) return largest | sign;
    // Round to nearest even with an unbounded exponent: the next value up would be one ulp
    // further, and the largest code's mantissa is odd, so the halfway point goes up too.
    const double ulp = largest_value - ReferenceDecode(spec, largest - 1);
    const uint32_t infinity = largest + 1;
    return (magnitude >= largest_value + ulp / 2 ? infinity : largest) | sign;
  }
  // The largest code whose value is <= magnitude, by binary search over the ordered codes.
  uint32_t low = 0;
  uint32_t high = largest;
  while (low < high) {
    const uint32_t middle = (low + high + 1) / 2;
    if (ReferenceDecode(spec, middle) <= magnitude) {
      low = middle;
    } else {
      high = middle - 1;
    }
  }
  const double below = ReferenceDecode(spec, low);
  if (below == magnitude || low == largest) return low | sign;
  const double above = ReferenceDecode(spec, low + 1);
  const double to_below = magnitude - below;
  const double to_above = above - magnitude;
  uint32_t nearest = to_below < to_above ? low : low + 1;
  if (to_below == to_above) nearest = (low % 2 == 0) ? low : low + 1;
  return nearest | sign;
}

uint32_t FastEncode(WireFormat format, float value, float scale = 1.0f) {
  uint32_t code = 0;  // little-endian: the low bytes hold a 1- or 2-byte code
  EncodeToWire(format, &value, 1, scale, &code);
  return code;
}

float FastDecode(WireFormat format, uint32_t code, float inverse_scale = 1.0f) {
  float value = 0;
  DecodeFromWire(format, &code, 1, inverse_scale, &value);
  return value;
}

std::string Hex(uint32_t code) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", code);
  return text;
}

TEST(WireFormatTest, EveryCodeDecodesAsItsDefinitionSays) {
  for (WireFormat format : kFormats) {
    const Spec spec = SpecOf(format);
    for (uint32_t code = 0; code < (1U << Bits(spec)); ++code) {
      const double expected = ReferenceDecode(spec, code);
      const float decoded = FastDecode(format, code);
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(decoded)) << WireFormatName(format) << " " << Hex(code);
      } else {
        ASSERT_EQ(std::bit_cast<uint64_t>(static_cast<double>(decoded)), std::bit_cast<uint64_t>(expected))
            << WireFormatName(format) << " " << Hex(code) << " decodes to " << decoded << ", not "
            << expected;
      }
    }
  }
}

// Around every pair of neighbouring values: both ends, the halfway point (a tie), and the floats
// just either side of it; with both signs.
TEST(WireFormatTest, EncodingRoundsToNearestEvenAsTheReference) {
  for (WireFormat format : kFormats) {
    const Spec spec = SpecOf(format);
    const uint32_t largest = LargestFiniteCode(spec);
    for (uint32_t code = 0; code < largest; ++code) {
      const auto low = static_cast<float>(ReferenceDecode(spec, code));
      const auto high = static_cast<float>(ReferenceDecode(spec, code + 1));
      const auto half =
          static_cast<float>((ReferenceDecode(spec, code) + ReferenceDecode(spec, code + 1)) / 2);
      for (float value : {low, high, half, std::nextafter(half, 0.0f), std::nextafter(half, kInf)}) {
        for (float signed_value : {value, -value}) {
          ASSERT_EQ(FastEncode(format, signed_value), ReferenceEncode(format, signed_value))
              << WireFormatName(format) << " encoding " << signed_value << " near code " << Hex(code);
        }
      }
    }
  }
}

TEST(WireFormatTest, EncodingAgreesWithTheReferenceOnRandomFloats) {
  std::mt19937 random(12345);
  std::vector<float> values(200000);
  for (float& value : values) value = std::bit_cast<float>(static_cast<uint32_t>(random()));
  for (WireFormat format : kFormats) {
    std::vector<uint8_t> encoded(values.size() * WireFormatSize(format));
    EncodeToWire(format, values.data(), values.size(), 1.0f, encoded.data());
    for (size_t i = 0; i < values.size(); ++i) {
      uint32_t code = 0;
      std::memcpy(&code, &encoded[i * WireFormatSize(format)], WireFormatSize(format));
      ASSERT_EQ(code, ReferenceEncode(format, values[i]))
          << WireFormatName(format) << " encoding " << values[i];
    }
  }
}

// The fused encoding gives the same codes, and what they lost is the value minus their decoding.
TEST(WireFormatTest, EncodingKeepingTheLossIsEncodingThenDecoding) {
  std::mt19937 random(11);
  std::normal_distribution<float> gradient(0.0f, 0.01f);
  std::vector<float> values(4099);
  for (float& value : values) value = gradient(random);
  for (WireFormat format : kFormats) {
    for (Fp8Cast cast : {Fp8Cast::kSafe, Fp8Cast::kNaive}) {
      const float scale = WireScaleFor(format, AbsoluteMax(values.data(), values.size()), 1.0f);
      const size_t bytes = values.size() * WireFormatSize(format);
      std::vector<uint8_t> codes(bytes);
      std::vector<uint8_t> fused(bytes);
      std::vector<float> decoded(values.size());
      std::vector<float> lost(values.size());
      EncodeToWire(format, values.data(), values.size(), scale, codes.data(), cast);
      EncodeToWireKeepingLoss(format, values.data(), values.size(), scale, fused.data(), lost.data(), cast);
      ASSERT_EQ(fused, codes) << WireFormatName(format);
      DecodeFromWire(format, codes.data(), values.size(), 1.0f / scale, decoded.data());
      for (size_t i = 0; i < values.size(); ++i) {
        ASSERT_EQ(lost[i], values[i] - decoded[i]) << WireFormatName(format) << " element " << i;
      }
    }
  }
}

TEST(WireFormatTest, TheScaleMultipliesBeforeRoundingAndDivides) {
  std::mt19937 random(7);
  std::normal_distribution<float> gradient(0.0f, 1e-4f);
  for (WireFormat format : kFormats) {
    for (float scale : {0x1p-3f, 1.0f, 0x1p10f, 0x1p20f}) {
      std::vector<float> values(4096);
      for (float& value : values) value = gradient(random);
      std::vector<uint8_t> encoded(values.size() * WireFormatSize(format));
      EncodeToWire(format, values.data(), values.size(), scale, encoded.data());
      std::vector<float> decoded(values.size(), 1.0f);
      std::vector<float> added(values.size(), 1.0f);
      DecodeFromWire(format, encoded.data(), values.size(), 1.0f / scale, decoded.data());
      DecodeAddFromWire(format, encoded.data(), values.size(), 1.0f / scale, added.data());
      for (size_t i = 0; i < values.size(); ++i) {
        const uint32_t expected = ReferenceEncode(format, values[i] * scale);
        uint32_t code = 0;
        std::memcpy(&code, &encoded[i * WireFormatSize(format)], WireFormatSize(format));
        ASSERT_EQ(code, expected) << WireFormatName(format) << " scale " << scale << " value " << values[i];
        const auto exact = static_cast<float>(ReferenceDecode(SpecOf(format), expected) / scale);
        ASSERT_EQ(decoded[i], exact);
        ASSERT_EQ(added[i], 1.0f + exact);
      }
    }
  }
}

TEST(WireFormatTest, EveryFiniteCodeSurvivesARoundTrip) {
  for (WireFormat format : kFormats) {
    const Spec spec = SpecOf(format);
    for (uint32_t magnitude = 0; magnitude <= LargestFiniteCode(spec); ++magnitude) {
      for (uint32_t code : {magnitude, magnitude | SignBit(spec)}) {
        ASSERT_EQ(FastEncode(format, FastDecode(format, code)), code)
            << WireFormatName(format) << " " << Hex(code);
      }
    }
  }
}

// The edges, by hand: the largest values, what lies past them, infinities and NaN, subnormals.
TEST(WireFormatTest, Float8SaturatesAndNeverMakesInfinityOrNan) {
  const WireFormat e4m3 = WireFormat::kFloat8E4M3;
  EXPECT_EQ(FastEncode(e4m3, 448.0f), 0x7eU);
  EXPECT_EQ(FastEncode(e4m3, 464.0f), 0x7eU);  // halfway to 480, which E4M3 lacks
  EXPECT_EQ(FastEncode(e4m3, 1e30f), 0x7eU);
  EXPECT_EQ(FastEncode(e4m3, kInf), 0x7eU);
  EXPECT_EQ(FastEncode(e4m3, -kInf), 0xfeU);
  EXPECT_EQ(FastEncode(e4m3, std::numeric_limits<float>::max()), 0x7eU);
  EXPECT_EQ(FastEncode(e4m3, std::nanf("")), 0x7fU);
  EXPECT_EQ(FastEncode(e4m3, 0x1p-9f), 0x01U);     // the smallest subnormal
  EXPECT_EQ(FastEncode(e4m3, 0x1p-10f), 0x00U);    // half of it: a tie, to even (zero)
  EXPECT_EQ(FastEncode(e4m3, 0x1.8p-10f), 0x01U);  // three quarters
  EXPECT_EQ(FastEncode(e4m3, 0x1.8p-9f), 0x02U);   // 1.5 units: a tie, to even
  EXPECT_EQ(FastEncode(e4m3, 0x1.ep-7f), 0x08U);   // just under 2^-6 rounds up to the smallest normal
  EXPECT_EQ(FastEncode(e4m3, -0.0f), 0x80U);
  EXPECT_EQ(FastDecode(e4m3, 0x7e), 448.0f);
  EXPECT_TRUE(std::isnan(FastDecode(e4m3, 0xff)));

  const WireFormat e5m2 = WireFormat::kFloat8E5M2;
  EXPECT_EQ(FastEncode(e5m2, 57344.0f), 0x7bU);
  EXPECT_EQ(FastEncode(e5m2, 61440.0f), 0x7bU);  // halfway to 65536, which would be infinity
  EXPECT_EQ(FastEncode(e5m2, kInf), 0x7bU);
  EXPECT_EQ(FastEncode(e5m2, -kInf), 0xfbU);
  EXPECT_EQ(FastEncode(e5m2, std::nanf("")), 0x7fU);
  EXPECT_EQ(FastEncode(e5m2, 0x1p-16f), 0x01U);
  EXPECT_EQ(FastEncode(e5m2, 0x1p-17f), 0x00U);
  EXPECT_EQ(FastDecode(e5m2, 0x7c), kInf);
  EXPECT_EQ(FastDecode(e5m2, 0x7b), 57344.0f);
}

// The naive fp8 cast: the safe cast's rounding in the normal range, zero below it, and NaN (E4M3)
// or infinity (E5M2) where a rounding goes past the largest finite value.
uint32_t ReferenceNaiveEncode(WireFormat format, float value) {
  const Spec spec = SpecOf(format);
  const uint32_t sign = std::signbit(value) ? SignBit(spec) : 0;
  if (std::isnan(value)) return spec.nan_code | sign;
  const double magnitude = std::fabs(static_cast<double>(value));
  const uint32_t smallest_normal = 1U << spec.mantissa_bits;
  if (magnitude < ReferenceDecode(spec, smallest_normal)) return sign;
  const uint32_t largest = LargestFiniteCode(spec);
  const double largest_value = ReferenceDecode(spec, largest);
  const double ulp = largest_value - ReferenceDecode(spec, largest - 1);
  const double halfway = largest_value + ulp / 2;  // a tie goes to the even code
  if (magnitude > halfway || (magnitude == halfway && largest % 2 == 1)) return (largest + 1) | sign;
  return ReferenceEncode(format, value);
}

TEST(WireFormatTest, NaiveFloat8CastFlushesSubnormalsAndOverflows) {
  const WireFormat e4m3 = WireFormat::kFloat8E4M3;
  const WireFormat e5m2 = WireFormat::kFloat8E5M2;
  const auto naive = [](WireFormat format, float value) {
    uint32_t code = 0;
    EncodeToWire(format, &value, 1, 1.0f, &code, Fp8Cast::kNaive);
    return code;
  };
  EXPECT_EQ(naive(e4m3, 0x1p-6f), 0x08U);    // the smallest normal stays
  EXPECT_EQ(naive(e4m3, 0x1.ep-7f), 0x00U);  // just under it: zero (the safe cast rounds up)
  EXPECT_EQ(naive(e4m3, -0x1p-9f), 0x80U);   // a subnormal: a signed zero
  EXPECT_EQ(naive(e4m3, 448.0f), 0x7eU);
  EXPECT_EQ(naive(e4m3, 463.0f), 0x7eU);
  EXPECT_EQ(naive(e4m3, 464.0f), 0x7eU);  // halfway to 480: a tie, to 448's even mantissa
  EXPECT_EQ(naive(e4m3, 465.0f), 0x7fU);  // past it, rounded up past the largest: NaN
  EXPECT_EQ(naive(e4m3, -kInf), 0xffU);
  EXPECT_EQ(naive(e4m3, std::numeric_limits<float>::max()), 0x7fU);
  EXPECT_EQ(naive(e5m2, 61440.0f), 0x7cU);  // infinity
  EXPECT_EQ(naive(e5m2, 0x1p-15f), 0x00U);
  EXPECT_EQ(naive(e5m2, 0x1p-14f), 0x04U);
  EXPECT_TRUE(std::isnan(FastDecode(e4m3, naive(e4m3, 1000.0f))));

  std::mt19937 random(99);
  std::vector<float> values(200000);
  for (float& value : values) value = std::bit_cast<float>(static_cast<uint32_t>(random()));
  for (WireFormat format : {e4m3, e5m2}) {
    std::vector<uint8_t> encoded(values.size());
    EncodeToWire(format, values.data(), values.size(), 1.0f, encoded.data(), Fp8Cast::kNaive);
    for (size_t i = 0; i < values.size(); ++i) {
      ASSERT_EQ(encoded[i], ReferenceNaiveEncode(format, values[i]))
          << WireFormatName(format) << " encoding " << values[i];
    }
  }
}

TEST(WireFormatTest, SixteenBitFormatsOverflowAsACastDoes) {
  const WireFormat fp16 = WireFormat::kFloat16;
  EXPECT_EQ(FastEncode(fp16, 65504.0f), 0x7bffU);
  EXPECT_EQ(FastEncode(fp16, 65519.0f), 0x7bffU);
  EXPECT_EQ(FastEncode(fp16, 65520.0f), 0x7c00U);  // halfway: to even, which is infinity
  EXPECT_EQ(FastEncode(fp16, -kInf), 0xfc00U);
  EXPECT_EQ(FastEncode(fp16, std::nanf("")), 0x7e00U);
  EXPECT_EQ(FastEncode(fp16, 0x1p-24f), 0x0001U);
  EXPECT_EQ(FastEncode(fp16, 0x1p-25f), 0x0000U);
  EXPECT_EQ(FastEncode(fp16, 1.0f), 0x3c00U);

  const WireFormat bf16 = WireFormat::kBFloat16;
  EXPECT_EQ(FastEncode(bf16, 1.0f), 0x3f80U);
  EXPECT_EQ(FastEncode(bf16, std::numeric_limits<float>::max()), 0x7f80U);
  EXPECT_EQ(FastEncode(bf16, WireFormatMax(bf16)), 0x7f7fU);
  EXPECT_EQ(FastEncode(bf16, std::numeric_limits<float>::denorm_min()), 0x0000U);
  EXPECT_EQ(FastEncode(bf16, -std::numeric_limits<float>::quiet_NaN()), 0xffc0U);
}

TEST(WireFormatTest, AbsoluteMaxSkipsNanAndSeesInfinity) {
  const std::vector<float> values = {0.5f, -3.0f, std::nanf(""), 2.0f};
  EXPECT_EQ(AbsoluteMax(values.data(), values.size()), 3.0f);
  const std::vector<float> with_infinity = {1.0f, -kInf};
  EXPECT_EQ(AbsoluteMax(with_infinity.data(), with_infinity.size()), kInf);
  EXPECT_EQ(AbsoluteMax(nullptr, 0), 0.0f);
}

TEST(WireFormatTest, ScaleIsThePowerOfTwoThatFillsTheRange) {
  for (WireFormat format : kFormats) {
    for (float amax : {1e-30f, 3e-7f, 0.01f, 1.0f, 448.0f, 449.0f, 1e4f}) {
      for (float headroom : {1.0f, 2.0f, 4.0f}) {
        const float scale = WireScaleFor(format, amax, headroom);
        int exponent = 0;
        EXPECT_EQ(std::frexp(scale, &exponent), 0.5f) << "a power of two";
        const double filled = static_cast<double>(amax) * scale * headroom;
        if (scale > 0x1p-126f && scale < 0x1p126f) {
          EXPECT_LE(filled, WireFormatMax(format)) << WireFormatName(format) << " amax " << amax;
          EXPECT_GT(filled * 2, WireFormatMax(format)) << WireFormatName(format) << " amax " << amax;
        }
      }
    }
    EXPECT_EQ(WireScaleFor(format, 0.0f, 1.0f), 1.0f);
    EXPECT_EQ(WireScaleFor(format, kInf, 1.0f), 1.0f);
    EXPECT_EQ(WireScaleFor(format, std::nanf(""), 1.0f), 1.0f);
  }
  EXPECT_EQ(WireScaleFor(WireFormat::kFloat8E4M3, 448.0f, 1.0f), 1.0f);
  EXPECT_EQ(WireScaleFor(WireFormat::kFloat8E4M3, 1.0f, 2.0f), 128.0f);      // 1 * 128 * 2 = 256 <= 448
  EXPECT_EQ(WireScaleFor(WireFormat::kFloat8E4M3, 1e-45f, 1.0f), 0x1p126f);  // clamped
}

TEST(WireFormatTest, NamesAreTheCompressionFormatsNames) {
  for (WireFormat format : kFormats) {
    EXPECT_EQ(WireFormatOf(CompressionFormatOf(format)), format);
    EXPECT_EQ(ParseCompressionFormat(WireFormatName(format)), CompressionFormatOf(format));
  }
  EXPECT_EQ(ParseCompressionFormat("fp8"), CompressionFormat::kFloat8E4M3);
  EXPECT_EQ(CompressionFormatName(CompressionFormat::kFloat8E4M3), "fp8-e4m3");
  EXPECT_EQ(ParseCompressionFormat("none"), CompressionFormat::kNone);
  EXPECT_EQ(ParseCompressionFormat("fp32"), std::nullopt);
  EXPECT_THROW(WireFormatOf(CompressionFormat::kNone), std::invalid_argument);
}

}  // namespace
}  // namespace hvdrun
