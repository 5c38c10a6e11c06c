// WireFormat: the element formats a compressed allreduce sends in place of float32, and the
// conversions between float32 and each of them.
//
//   format      bits  largest finite   smallest normal  smallest subnormal  infinities
//   kFloat16    16    65504            2^-14            2^-24               yes   (IEEE binary16)
//   kBFloat16   16    3.39e38          2^-126           2^-133              yes   (float32's upper half)
//   kFloat8E4M3 8     448              2^-6             2^-9                no    (OCP FP8 E4M3, torch's
//   float8_e4m3fn) kFloat8E5M2 8     57344            2^-14            2^-16               yes   (OCP FP8
//   E5M2)
//
// Encoding multiplies each value by `scale` and rounds to nearest, ties to even. A scale that is a
// power of two (WireScaleFor) makes the multiplication exact, so that the rounding is the only
// error. The two 16-bit formats encode as a cast does (torch's .half() and .bfloat16(), Horovod's
// Compression.fp16): a value beyond the largest finite one becomes an infinity. The fp8 formats
// saturate, since their range is narrow enough for a gradient to leave it: a value beyond the
// largest finite one, infinities included, becomes the largest finite value of its sign. NaN stays
// NaN in every format (and is never produced from a number). Decoding is exact; it multiplies by
// `inverse_scale`.
//
// Fp8Cast::kNaive encodes fp8 as a converter that ignores the formats' edges does, for showing what
// the safe cast guards against: a value below the smallest normal becomes zero (no subnormals),
// and one beyond the largest finite becomes NaN (E4M3, which has no infinity) or infinity (E5M2).
// Values in the normal range round as the safe cast's do.
//
// The loops are written without branches over 32-bit integers, so that the compiler vectorizes
// them (wire_format.cc is compiled at -O3); wire_format_test.cc checks them bit for bit against a
// reference that finds the nearest value of each format by search. Everything here is pure and
// thread-safe.
#ifndef HVDRUN_RUNTIME_COMPRESSION_WIRE_FORMAT_H_
#define HVDRUN_RUNTIME_COMPRESSION_WIRE_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hvdrun/types.h"

namespace hvdrun {

enum class WireFormat : uint8_t {
  kFloat16 = 0,
  kBFloat16 = 1,
  kFloat8E4M3 = 2,
  kFloat8E5M2 = 3,
};

// The wire format of a compression format other than kNone, and back.
WireFormat WireFormatOf(CompressionFormat format);
CompressionFormat CompressionFormatOf(WireFormat format);

// Bytes per element: 2 or 1.
size_t WireFormatSize(WireFormat format);
// As CompressionFormatName: "fp16", "bf16", "fp8-e4m3", "fp8-e5m2".
std::string_view WireFormatName(WireFormat format);
// The largest finite value of the format.
float WireFormatMax(WireFormat format);

enum class Fp8Cast : uint8_t {
  kSafe = 0,   // round to nearest even, subnormals kept, saturating
  kNaive = 1,  // flush below the smallest normal to zero, overflow to NaN or infinity
};

// out[i] = encode(in[i] * scale); `out` holds count * WireFormatSize(format) bytes. `cast` applies
// to the fp8 formats only.
void EncodeToWire(WireFormat format, const float* in, size_t count, float scale, void* out,
                  Fp8Cast cast = Fp8Cast::kSafe);
// EncodeToWire, and lost[i] = in[i] - decode(out[i]) / scale: what encoding lost, for error
// feedback, in the same pass over `in`. `scale` must be a power of two (WireScaleFor).
void EncodeToWireKeepingLoss(WireFormat format, const float* in, size_t count, float scale, void* out,
                             float* lost, Fp8Cast cast = Fp8Cast::kSafe);
// out[i] = decode(in[i]) * inverse_scale.
void DecodeFromWire(WireFormat format, const void* in, size_t count, float inverse_scale, float* out);
// out[i] += decode(in[i]) * inverse_scale: one rank's share added to a float32 sum.
void DecodeAddFromWire(WireFormat format, const void* in, size_t count, float inverse_scale, float* out);

// The largest |in[i]|, for the scale every rank agrees on; 0 for count 0. A NaN is skipped; an
// infinity is the answer.
float AbsoluteMax(const float* in, size_t count);

// The power of two s that brings `amax` into the format with `headroom` to spare: the largest s
// with amax * s * headroom <= WireFormatMax(format). A sum of N ranks' values fits when each rank
// encodes with headroom N. amax 0 (nothing to scale), an infinity or NaN give 1. s lies within
// [2^-126, 2^126], so that it and 1/s are normal floats.
float WireScaleFor(WireFormat format, float amax, float headroom);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_COMPRESSION_WIRE_FORMAT_H_
