#include "examples/bench/element_codec.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "runtime/bit_cast.h"

namespace hvdrun {
namespace {

// IEEE binary16: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits.
uint16_t HalfBits(float value) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  const float magnitude = std::fabs(value);
  if (std::isnan(value)) return static_cast<uint16_t>(sign | 0x7e00);
  if (magnitude >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00);  // rounds to infinity
  if (magnitude == 0.0f) return sign;
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude = m * 2^exponent, m in [0.5, 1)
  // The value's leading bit is 2^(exponent - 1); below 2^-14 the half is subnormal, in units of 2^-24.
  const int leading = std::max(exponent - 1, -14);
  // The significand in units of the half's last place, rounded to nearest even (the default
  // rounding mode); a carry into the next power of two lands in the exponent field by the addition.
  const auto significand = static_cast<uint32_t>(std::nearbyint(std::ldexp(magnitude, 10 - leading)));
  return static_cast<uint16_t>(sign | ((static_cast<uint32_t>(leading + 14) << 10) + significand));
}

double HalfValue(uint16_t bits) {
  const double sign = (bits & 0x8000) != 0 ? -1.0 : 1.0;
  const int exponent = (bits >> 10) & 0x1f;
  const int fraction = bits & 0x3ff;
  if (exponent == 0x1f) return fraction != 0 ? std::nan("") : sign * HUGE_VAL;
  if (exponent == 0) return sign * std::ldexp(fraction, -24);
  return sign * std::ldexp(fraction + 1024, exponent - 25);
}

// bfloat16: a float's upper half, rounded to nearest even.
uint16_t BFloat16Bits(float value) {
  const auto word = BitCast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((word >> 16) | 0x40);
  return static_cast<uint16_t>((word + 0x7fff + ((word >> 16) & 1)) >> 16);
}

double BFloat16Value(uint16_t bits) { return BitCast<float>(static_cast<uint32_t>(bits) << 16); }

template <typename T>
void Put(char* to, T value) {
  std::memcpy(to, &value, sizeof(T));
}

template <typename T>
T Get(const char* from) {
  T value;
  std::memcpy(&value, from, sizeof(T));
  return value;
}

}  // namespace

std::vector<char> EncodeElements(DataType type, const std::vector<double>& values) {
  const size_t size = DataTypeSize(type);
  std::vector<char> bytes(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    char* to = bytes.data() + i * size;
    switch (type) {
      case DataType::kFloat32:
        Put(to, static_cast<float>(values[i]));
        break;
      case DataType::kFloat64:
        Put(to, values[i]);
        break;
      case DataType::kFloat16:
        Put(to, HalfBits(static_cast<float>(values[i])));
        break;
      case DataType::kBFloat16:
        Put(to, BFloat16Bits(static_cast<float>(values[i])));
        break;
      case DataType::kInt32:
        Put(to, static_cast<int32_t>(values[i]));
        break;
      case DataType::kInt64:
        Put(to, static_cast<int64_t>(values[i]));
        break;
    }
  }
  return bytes;
}

std::vector<double> DecodeElements(DataType type, const char* bytes, size_t count) {
  const size_t size = DataTypeSize(type);
  std::vector<double> values(count);
  for (size_t i = 0; i < count; ++i) {
    const char* from = bytes + i * size;
    switch (type) {
      case DataType::kFloat32:
        values[i] = Get<float>(from);
        break;
      case DataType::kFloat64:
        values[i] = Get<double>(from);
        break;
      case DataType::kFloat16:
        values[i] = HalfValue(Get<uint16_t>(from));
        break;
      case DataType::kBFloat16:
        values[i] = BFloat16Value(Get<uint16_t>(from));
        break;
      case DataType::kInt32:
        values[i] = Get<int32_t>(from);
        break;
      case DataType::kInt64:
        values[i] = static_cast<double>(Get<int64_t>(from));
        break;
    }
  }
  return values;
}

}  // namespace hvdrun
