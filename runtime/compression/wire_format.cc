#include "runtime/compression/wire_format.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "runtime/bit_cast.h"

// Each conversion is compiled twice, for x86-64's baseline (SSE2, 4 floats a step) and for AVX2 (8),
// and the loader picks the one the processor runs (GCC's target_clones, an ifunc). Both round alike:
// the loops are integer operations and single float multiplications, additions and subtractions,
// which every vector width computes as IEEE single precision does (AVX2 brings no fused
// multiply-add; wire_format.cc is compiled with -ffp-contract=off besides). A build that defines
// HVDRUN_WIRE_KERNEL itself (empty: the baseline alone) keeps its own; the tests build one so, so
// that the baseline is checked on a processor that has AVX2 too.
#ifndef HVDRUN_WIRE_KERNEL
#if defined(__x86_64__) && defined(__GNUC__)
#define HVDRUN_WIRE_KERNEL __attribute__((target_clones("avx2", "default")))
#else
#define HVDRUN_WIRE_KERNEL
#endif
#endif

namespace hvdrun {
namespace {

// Each format as the element loops see it. Encoding a magnitude `a` (sign and NaN are handled
// around it) takes one of two ways:
//   - normal: a's float32 bits rounded to the format's mantissa width (the carry of a round-up
//     runs into the exponent, as it should), then the exponent rebiased by subtracting
//     kRebias << kMantissa;
//   - below the smallest normal: a + kSubnormalMagic, a power of two whose float32 unit in the
//     last place is the format's smallest subnormal, so that the FPU's own addition rounds a to a
//     whole number of subnormal units (to nearest, ties to even), which the low bits then hold.
// kMaxInput is where the magnitude is clamped first: the largest finite value for a saturating
// format, infinity for the others, whose codes past the largest finite one are then clamped to
// kInfinityCode.
struct Float16Layout {
  static constexpr int kMantissa = 10;
  static constexpr uint32_t kRebias = 127 - 15;
  static constexpr float kMinNormal = 0x1p-14f;
  static constexpr float kSubnormalMagic = 0x1p-1f;  // ulp 2^-24
  static constexpr float kMaxInput = std::numeric_limits<float>::infinity();
  static constexpr uint32_t kInfinityCode = 0x7c00;
  static constexpr uint32_t kNanCode = 0x7e00;
  static constexpr uint32_t kSignBit = 0x8000;
};
struct Float8E4M3Layout {
  static constexpr int kMantissa = 3;
  static constexpr uint32_t kRebias = 127 - 7;
  static constexpr float kMinNormal = 0x1p-6f;
  static constexpr float kSubnormalMagic = 0x1p14f;  // ulp 2^-9
  static constexpr float kMaxInput = 448.0f;         // saturating: 0x7e; 0x7f is NaN
  static constexpr uint32_t kInfinityCode = 0x7e;    // never reached after the clamp
  static constexpr uint32_t kNanCode = 0x7f;
  static constexpr uint32_t kSignBit = 0x80;
  static constexpr uint32_t kOverflowCode = 0x7f;  // the naive cast's: NaN
};
struct Float8E5M2Layout {
  static constexpr int kMantissa = 2;
  static constexpr uint32_t kRebias = 127 - 15;
  static constexpr float kMinNormal = 0x1p-14f;
  static constexpr float kSubnormalMagic = 0x1p7f;  // ulp 2^-16
  static constexpr float kMaxInput = 57344.0f;      // saturating: 0x7b; 0x7c is infinity
  static constexpr uint32_t kInfinityCode = 0x7b;
  static constexpr uint32_t kNanCode = 0x7f;
  static constexpr uint32_t kSignBit = 0x80;
  static constexpr uint32_t kOverflowCode = 0x7c;  // the naive cast's: infinity
};

// The compares and selections run on signed 32-bit integers, which x86-64's baseline vector
// instructions (SSE2) compare; every magnitude's bits fit, and a non-negative float's bits order
// as its value. Float compares would keep GCC from removing the branches (they may trap).
template <typename Layout>
inline uint32_t EncodeOne(float value) {
  constexpr int kDropped = 23 - Layout::kMantissa;
  const auto kMaxInputBits = BitCast<int32_t>(Layout::kMaxInput);
  const auto kMinNormalBits = BitCast<int32_t>(Layout::kMinNormal);
  constexpr auto kInfinityCode = static_cast<int32_t>(Layout::kInfinityCode);
  const uint32_t bits = BitCast<uint32_t>(value);
  const uint32_t sign = (bits >> 31) * Layout::kSignBit;
  const auto magnitude_bits = static_cast<int32_t>(bits & 0x7fffffffU);
  const bool nan = magnitude_bits > 0x7f800000;
  const int32_t m = magnitude_bits < kMaxInputBits ? magnitude_bits : kMaxInputBits;
  const int32_t half_minus_one = (1 << (kDropped - 1)) - 1;
  int32_t normal = ((m + half_minus_one + ((m >> kDropped) & 1)) >> kDropped) -
                   static_cast<int32_t>(Layout::kRebias << Layout::kMantissa);
  normal = normal < kInfinityCode ? normal : kInfinityCode;
  const int32_t subnormal = BitCast<int32_t>(BitCast<float>(m) + Layout::kSubnormalMagic) -
                            BitCast<int32_t>(Layout::kSubnormalMagic);
  int32_t code = m < kMinNormalBits ? subnormal : normal;
  code = nan ? static_cast<int32_t>(Layout::kNanCode) : code;
  return static_cast<uint32_t>(code) | sign;
}

// Fp8Cast::kNaive: the normal path alone, unclamped; a code past the largest finite one (a rounding
// up to 2^(emax+1) included) is the overflow code, and a magnitude below the smallest normal is 0.
template <typename Layout>
inline uint32_t EncodeOneNaive(float value) {
  constexpr int kDropped = 23 - Layout::kMantissa;
  const auto kMinNormalBits = BitCast<int32_t>(Layout::kMinNormal);
  constexpr auto kLargestCode = static_cast<int32_t>(Layout::kInfinityCode);
  const uint32_t bits = BitCast<uint32_t>(value);
  const uint32_t sign = (bits >> 31) * Layout::kSignBit;
  const auto m = static_cast<int32_t>(bits & 0x7fffffffU);
  const bool nan = m > 0x7f800000;
  const int32_t half_minus_one = (1 << (kDropped - 1)) - 1;
  // In 64 bits: near float32's largest exponent the rounding addition would overflow 32.
  const int64_t rounded = (static_cast<int64_t>(m) + half_minus_one + ((m >> kDropped) & 1)) >> kDropped;
  const int64_t normal = rounded - static_cast<int64_t>(Layout::kRebias << Layout::kMantissa);
  int32_t code =
      normal > kLargestCode ? static_cast<int32_t>(Layout::kOverflowCode) : static_cast<int32_t>(normal);
  code = m < kMinNormalBits ? 0 : code;
  code = nan ? static_cast<int32_t>(Layout::kNanCode) : code;
  return static_cast<uint32_t>(code) | sign;
}

// bfloat16 keeps float32's exponent: only the mantissa is rounded (an overflow carries into the
// infinity code, as a cast does); a NaN keeps its upper bits with the quiet bit set.
inline uint32_t EncodeBFloat16(float value) {
  const uint32_t bits = BitCast<uint32_t>(value);
  const uint32_t rounded = (bits + 0x7fffU + ((bits >> 16) & 1U)) >> 16;
  const bool nan = (bits & 0x7fffffffU) > 0x7f800000U;
  return nan ? ((bits >> 16) | 0x0040U) : rounded;
}

// Decoding: a normal code's bits moved into float32's place and the exponent rebiased; a subnormal
// code is its mantissa times the smallest subnormal; the all-ones exponent is infinity or NaN in
// the formats that have them (E4M3 has only the NaN 0x7f).
struct Float16Decoding {
  static constexpr int kMantissa = 10;
  static constexpr uint32_t kRebias = 127 - 15;
  static constexpr uint32_t kMagnitudeMask = 0x7fff;
  static constexpr uint32_t kSignShift = 16;
  static constexpr float kSubnormalUnit = 0x1p-24f;
  static constexpr uint32_t kFirstSpecial = 0x7c00;  // infinity, then NaNs
};
struct Float8E4M3Decoding {
  static constexpr int kMantissa = 3;
  static constexpr uint32_t kRebias = 127 - 7;
  static constexpr uint32_t kMagnitudeMask = 0x7f;
  static constexpr uint32_t kSignShift = 24;
  static constexpr float kSubnormalUnit = 0x1p-9f;
  static constexpr uint32_t kFirstSpecial = 0x7f;  // the one NaN
};
struct Float8E5M2Decoding {
  static constexpr int kMantissa = 2;
  static constexpr uint32_t kRebias = 127 - 15;
  static constexpr uint32_t kMagnitudeMask = 0x7f;
  static constexpr uint32_t kSignShift = 24;
  static constexpr float kSubnormalUnit = 0x1p-16f;
  static constexpr uint32_t kFirstSpecial = 0x7c;  // infinity, then NaNs
};

template <typename Decoding>
inline float DecodeOne(uint32_t code) {
  constexpr int kShift = 23 - Decoding::kMantissa;
  const uint32_t sign = (code & (Decoding::kMagnitudeMask + 1)) << Decoding::kSignShift;
  const auto magnitude = static_cast<int32_t>(code & Decoding::kMagnitudeMask);
  const int32_t normal = (magnitude << kShift) + static_cast<int32_t>(Decoding::kRebias << 23);
  // Past the largest finite code: float32's all-ones exponent with the code's mantissa (0 for
  // infinity, else a NaN; E4M3's only such code, 0x7f, has the mantissa 0b111).
  const int32_t special = 0x7f800000 | ((magnitude << kShift) & 0x007fffff);
  const float subnormal = static_cast<float>(magnitude) * Decoding::kSubnormalUnit;
  int32_t result = magnitude < (1 << Decoding::kMantissa) ? BitCast<int32_t>(subnormal) : normal;
  result = magnitude >= static_cast<int32_t>(Decoding::kFirstSpecial) ? special : result;
  return BitCast<float>(static_cast<uint32_t>(result) | sign);
}

inline float DecodeBFloat16(uint32_t code) { return BitCast<float>(code << 16); }

// The loops are inlined into each clone of the functions below, so that each is compiled for its
// clone's instructions.
template <typename Code, typename Encode>
[[gnu::always_inline]] inline void EncodeLoop(const float* in, size_t count, float scale, void* out,
                                              Encode encode) {
  Code* codes = static_cast<Code*>(out);
  for (size_t i = 0; i < count; ++i) codes[i] = static_cast<Code>(encode(in[i] * scale));
}

template <typename Code, typename Encode, typename Decode>
[[gnu::always_inline]] inline void EncodeKeepingLossLoop(const float* in, size_t count, float scale,
                                                         void* out, float* lost, Encode encode,
                                                         Decode decode) {
  Code* codes = static_cast<Code*>(out);
  const float inverse_scale = 1.0f / scale;
  for (size_t i = 0; i < count; ++i) {
    const auto code = static_cast<Code>(encode(in[i] * scale));
    codes[i] = code;
    lost[i] = in[i] - decode(code) * inverse_scale;
  }
}

template <typename Code, bool kAdd, typename Decode>
[[gnu::always_inline]] inline void DecodeLoop(const void* in, size_t count, float inverse_scale, float* out,
                                              Decode decode) {
  const Code* codes = static_cast<const Code*>(in);
  for (size_t i = 0; i < count; ++i) {
    const float value = decode(codes[i]) * inverse_scale;
    if constexpr (kAdd) {
      out[i] += value;
    } else {
      out[i] = value;
    }
  }
}

template <bool kAdd>
[[gnu::always_inline]] inline void Decode(WireFormat format, const void* in, size_t count,
                                          float inverse_scale, float* out) {
  switch (format) {
    case WireFormat::kFloat16:
      return DecodeLoop<uint16_t, kAdd>(in, count, inverse_scale, out, DecodeOne<Float16Decoding>);
    case WireFormat::kBFloat16:
      return DecodeLoop<uint16_t, kAdd>(in, count, inverse_scale, out, DecodeBFloat16);
    case WireFormat::kFloat8E4M3:
      return DecodeLoop<uint8_t, kAdd>(in, count, inverse_scale, out, DecodeOne<Float8E4M3Decoding>);
    case WireFormat::kFloat8E5M2:
      return DecodeLoop<uint8_t, kAdd>(in, count, inverse_scale, out, DecodeOne<Float8E5M2Decoding>);
  }
  throw std::invalid_argument("unknown wire format " + std::to_string(static_cast<int>(format)));
}

}  // namespace

size_t WireFormatSize(WireFormat format) {
  return format == WireFormat::kFloat16 || format == WireFormat::kBFloat16 ? 2 : 1;
}

WireFormat WireFormatOf(CompressionFormat format) {
  switch (format) {
    case CompressionFormat::kFloat16:
      return WireFormat::kFloat16;
    case CompressionFormat::kBFloat16:
      return WireFormat::kBFloat16;
    case CompressionFormat::kFloat8E4M3:
      return WireFormat::kFloat8E4M3;
    case CompressionFormat::kFloat8E5M2:
      return WireFormat::kFloat8E5M2;
    case CompressionFormat::kNone:
      break;
  }
  throw std::invalid_argument("compression format " + std::string(CompressionFormatName(format)) +
                              " has no wire format");
}

CompressionFormat CompressionFormatOf(WireFormat format) {
  switch (format) {
    case WireFormat::kFloat16:
      return CompressionFormat::kFloat16;
    case WireFormat::kBFloat16:
      return CompressionFormat::kBFloat16;
    case WireFormat::kFloat8E4M3:
      return CompressionFormat::kFloat8E4M3;
    case WireFormat::kFloat8E5M2:
      return CompressionFormat::kFloat8E5M2;
  }
  throw std::invalid_argument("unknown wire format " + std::to_string(static_cast<int>(format)));
}

std::string_view WireFormatName(WireFormat format) {
  return CompressionFormatName(CompressionFormatOf(format));
}

float WireFormatMax(WireFormat format) {
  switch (format) {
    case WireFormat::kFloat16:
      return 65504.0f;
    case WireFormat::kBFloat16:
      return BitCast<float>(0x7f7f0000U);
    case WireFormat::kFloat8E4M3:
      return Float8E4M3Layout::kMaxInput;
    case WireFormat::kFloat8E5M2:
      return Float8E5M2Layout::kMaxInput;
  }
  throw std::invalid_argument("unknown wire format " + std::to_string(static_cast<int>(format)));
}

HVDRUN_WIRE_KERNEL
void EncodeToWire(WireFormat format, const float* in, size_t count, float scale, void* out, Fp8Cast cast) {
  if (cast == Fp8Cast::kNaive && format == WireFormat::kFloat8E4M3) {
    return EncodeLoop<uint8_t>(in, count, scale, out, EncodeOneNaive<Float8E4M3Layout>);
  }
  if (cast == Fp8Cast::kNaive && format == WireFormat::kFloat8E5M2) {
    return EncodeLoop<uint8_t>(in, count, scale, out, EncodeOneNaive<Float8E5M2Layout>);
  }
  switch (format) {
    case WireFormat::kFloat16:
      return EncodeLoop<uint16_t>(in, count, scale, out, EncodeOne<Float16Layout>);
    case WireFormat::kBFloat16:
      return EncodeLoop<uint16_t>(in, count, scale, out, EncodeBFloat16);
    case WireFormat::kFloat8E4M3:
      return EncodeLoop<uint8_t>(in, count, scale, out, EncodeOne<Float8E4M3Layout>);
    case WireFormat::kFloat8E5M2:
      return EncodeLoop<uint8_t>(in, count, scale, out, EncodeOne<Float8E5M2Layout>);
  }
  throw std::invalid_argument("unknown wire format " + std::to_string(static_cast<int>(format)));
}

HVDRUN_WIRE_KERNEL
void EncodeToWireKeepingLoss(WireFormat format, const float* in, size_t count, float scale, void* out,
                             float* lost, Fp8Cast cast) {
  const bool naive = cast == Fp8Cast::kNaive;
  switch (format) {
    case WireFormat::kFloat16:
      return EncodeKeepingLossLoop<uint16_t>(in, count, scale, out, lost, EncodeOne<Float16Layout>,
                                             DecodeOne<Float16Decoding>);
    case WireFormat::kBFloat16:
      return EncodeKeepingLossLoop<uint16_t>(in, count, scale, out, lost, EncodeBFloat16, DecodeBFloat16);
    case WireFormat::kFloat8E4M3:
      return naive ? EncodeKeepingLossLoop<uint8_t>(in, count, scale, out, lost,
                                                    EncodeOneNaive<Float8E4M3Layout>,
                                                    DecodeOne<Float8E4M3Decoding>)
                   : EncodeKeepingLossLoop<uint8_t>(in, count, scale, out, lost, EncodeOne<Float8E4M3Layout>,
                                                    DecodeOne<Float8E4M3Decoding>);
    case WireFormat::kFloat8E5M2:
      return naive ? EncodeKeepingLossLoop<uint8_t>(in, count, scale, out, lost,
                                                    EncodeOneNaive<Float8E5M2Layout>,
                                                    DecodeOne<Float8E5M2Decoding>)
                   : EncodeKeepingLossLoop<uint8_t>(in, count, scale, out, lost, EncodeOne<Float8E5M2Layout>,
                                                    DecodeOne<Float8E5M2Decoding>);
  }
  throw std::invalid_argument("unknown wire format " + std::to_string(static_cast<int>(format)));
}

HVDRUN_WIRE_KERNEL
void DecodeFromWire(WireFormat format, const void* in, size_t count, float inverse_scale, float* out) {
  Decode<false>(format, in, count, inverse_scale, out);
}

HVDRUN_WIRE_KERNEL
void DecodeAddFromWire(WireFormat format, const void* in, size_t count, float inverse_scale, float* out) {
  Decode<true>(format, in, count, inverse_scale, out);
}

HVDRUN_WIRE_KERNEL
float AbsoluteMax(const float* in, size_t count) {
  // Over the bits: a magnitude's float32 bits order as its value, and a NaN's lie above
  // infinity's, where the mask below drops them.
  int32_t largest = 0;
  for (size_t i = 0; i < count; ++i) {
    int32_t magnitude = BitCast<int32_t>(in[i]) & 0x7fffffff;
    magnitude = magnitude > 0x7f800000 ? 0 : magnitude;
    largest = magnitude > largest ? magnitude : largest;
  }
  return BitCast<float>(largest);
}

float WireScaleFor(WireFormat format, float amax, float headroom) {
  if (!(amax > 0.0f) || !std::isfinite(amax) || !(headroom > 0.0f)) return 1.0f;
  // The largest integer e with amax * headroom * 2^e <= max, from the exponents of both sides.
  const double limit = static_cast<double>(WireFormatMax(format)) / (static_cast<double>(amax) * headroom);
  int exponent = static_cast<int>(std::floor(std::log2(limit)));
  if (std::ldexp(1.0, exponent) > limit) --exponent;  // log2's rounding near a power of two
  exponent = std::clamp(exponent, -126, 126);
  return std::ldexp(1.0f, exponent);
}

}  // namespace hvdrun
