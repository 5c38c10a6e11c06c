#include "hvdrun/types.h"

#include <array>
#include <utility>

namespace hvdrun {
namespace {

constexpr std::array<std::pair<DataType, std::string_view>, 6> kDataTypes = {{
    {DataType::kFloat32, "float32"},
    {DataType::kFloat64, "float64"},
    {DataType::kFloat16, "float16"},
    {DataType::kBFloat16, "bfloat16"},
    {DataType::kInt32, "int32"},
    {DataType::kInt64, "int64"},
}};
constexpr std::array<std::pair<ReduceOp, std::string_view>, 5> kReduceOps = {{
    {ReduceOp::kSum, "sum"},
    {ReduceOp::kAverage, "average"},
    {ReduceOp::kMin, "min"},
    {ReduceOp::kMax, "max"},
    {ReduceOp::kProduct, "product"},
}};
constexpr std::array<std::pair<BackendKind, std::string_view>, 3> kBackends = {{
    {BackendKind::kGloo, "gloo"},
    {BackendKind::kMpi, "mpi"},
    {BackendKind::kNccl, "nccl"},
}};
constexpr std::array<std::pair<CompressionFormat, std::string_view>, 6> kCompressionFormats = {{
    {CompressionFormat::kNone, "none"},
    {CompressionFormat::kFloat16, "fp16"},
    {CompressionFormat::kBFloat16, "bf16"},
    {CompressionFormat::kFloat8E4M3, "fp8-e4m3"},
    {CompressionFormat::kFloat8E5M2, "fp8-e5m2"},
    {CompressionFormat::kFloat8E4M3, "fp8"},  // parsed only: NameOf finds "fp8-e4m3" first
}};

template <typename Enum, size_t N>
std::string_view NameOf(const std::array<std::pair<Enum, std::string_view>, N>& table, Enum value) {
  for (const auto& [entry, name] : table) {
    if (entry == value) return name;
  }
  return "unknown";
}

template <typename Enum, size_t N>
std::optional<Enum> Parse(const std::array<std::pair<Enum, std::string_view>, N>& table,
                          std::string_view name) {
  for (const auto& [entry, entry_name] : table) {
    if (entry_name == name) return entry;
  }
  return std::nullopt;
}

}  // namespace

size_t DataTypeSize(DataType type) {
  switch (type) {
    case DataType::kFloat64:
    case DataType::kInt64:
      return 8;
    case DataType::kFloat32:
    case DataType::kInt32:
      return 4;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 2;
  }
  return 0;
}

std::string_view DataTypeName(DataType type) { return NameOf(kDataTypes, type); }
std::string_view ReduceOpName(ReduceOp op) { return NameOf(kReduceOps, op); }
std::string_view BackendName(BackendKind backend) { return NameOf(kBackends, backend); }
std::optional<DataType> ParseDataType(std::string_view name) { return Parse(kDataTypes, name); }
std::optional<ReduceOp> ParseReduceOp(std::string_view name) { return Parse(kReduceOps, name); }
std::optional<BackendKind> ParseBackend(std::string_view name) { return Parse(kBackends, name); }
std::string_view CompressionFormatName(CompressionFormat format) {
  return NameOf(kCompressionFormats, format);
}
std::optional<CompressionFormat> ParseCompressionFormat(std::string_view name) {
  return Parse(kCompressionFormats, name);
}

}  // namespace hvdrun
