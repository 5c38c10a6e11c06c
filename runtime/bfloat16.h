// BFloat16: the bfloat16 element type (the upper 16 bits of an IEEE float32) as the backends
// reduce it: each value is widened to float, combined, and rounded back to nearest-even.
//
// A plain value type, trivially copyable, the same size and layout as the wire format.
#ifndef HVDRUN_RUNTIME_BFLOAT16_H_
#define HVDRUN_RUNTIME_BFLOAT16_H_

#include <cstdint>

#include "runtime/bit_cast.h"

namespace hvdrun {

struct BFloat16 {
  uint16_t bits = 0;

  // Rounds to nearest, ties to even. NaN stays NaN (quiet); infinities and signed zeros are kept.
  static BFloat16 FromFloat(float value) {
    const uint32_t word = BitCast<uint32_t>(value);
    if ((word & 0x7fffffffU) > 0x7f800000U) {  // NaN: keep the sign, force a quiet payload bit
      return BFloat16{static_cast<uint16_t>((word >> 16) | 0x0040U)};
    }
    const uint32_t lsb = (word >> 16) & 1U;
    const uint32_t rounded = word + 0x7fffU + lsb;
    return BFloat16{static_cast<uint16_t>(rounded >> 16)};
  }

  float ToFloat() const { return BitCast<float>(static_cast<uint32_t>(bits) << 16); }
};

static_assert(sizeof(BFloat16) == 2);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BFLOAT16_H_
