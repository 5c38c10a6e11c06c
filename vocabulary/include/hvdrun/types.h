// Element types, reduction operations and backends of libhvdrun's collectives.
#ifndef HVDRUN_TYPES_H_
#define HVDRUN_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "hvdrun/export.h"

namespace hvdrun {

enum class DataType : uint8_t {
  kFloat32 = 0,
  kFloat64 = 1,
  kFloat16 = 2,   // IEEE 754 binary16
  kBFloat16 = 3,  // bfloat16: the upper half of a float32
  kInt32 = 4,
  kInt64 = 5,
};

enum class ReduceOp : uint8_t {
  kSum = 0,
  kAverage = 1,  // the sum divided by the number of ranks (integer types: truncated toward zero)
  kMin = 2,
  kMax = 3,
  kProduct = 4,  // the product over ranks (Horovod's hvd.Product); integers wrap around as their type does
};

// How float32 sums and averages travel between ranks (CompressionOptions in hvdrun/runtime.h;
// docs/compression.md): as they are, or in a smaller floating-point format.
enum class CompressionFormat : uint8_t {
  kNone = 0,
  kFloat16 = 1,     // IEEE binary16, as Horovod's Compression.fp16
  kBFloat16 = 2,    // bfloat16
  kFloat8E4M3 = 3,  // 8 bits: 4 exponent, 3 mantissa (max 448)
  kFloat8E5M2 = 4,  // 8 bits: 5 exponent, 2 mantissa (max 57344)
};

enum class BackendKind : uint8_t {
  kGloo = 0,
  kMpi = 1,
  kNccl = 2,
};

// Bytes per element.
HVDRUN_EXPORT size_t DataTypeSize(DataType type);

// Fusion packs the allreduces of one response into one buffer, each starting at a multiple of this
// many bytes. Named allreduces that already lie so in one array — in the order they are fused, in
// place (send == recv), each a multiple of kFusionAlignment bytes long, back to back — are reduced
// where they lie, with no copy through the fusion buffer: a program that owns its tensors' memory
// (as hvdrun-trainer's gradients, PyTorch DDP's gradient_as_bucket_view) pads each to this size.
inline constexpr size_t kFusionAlignment = 16;

// Lower-case names used on command lines, in HVDRUN_BACKEND and in results: "float32", "sum",
// "gloo". Parse* return std::nullopt for an unknown name.
HVDRUN_EXPORT std::string_view DataTypeName(DataType type);
HVDRUN_EXPORT std::string_view ReduceOpName(ReduceOp op);
HVDRUN_EXPORT std::string_view BackendName(BackendKind backend);
// "none", "fp16", "bf16", "fp8-e4m3", "fp8-e5m2"; ParseCompressionFormat also takes "fp8" for E4M3.
HVDRUN_EXPORT std::string_view CompressionFormatName(CompressionFormat format);
HVDRUN_EXPORT std::optional<DataType> ParseDataType(std::string_view name);
HVDRUN_EXPORT std::optional<ReduceOp> ParseReduceOp(std::string_view name);
HVDRUN_EXPORT std::optional<BackendKind> ParseBackend(std::string_view name);
HVDRUN_EXPORT std::optional<CompressionFormat> ParseCompressionFormat(std::string_view name);

}  // namespace hvdrun

#endif  // HVDRUN_TYPES_H_
