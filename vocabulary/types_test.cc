#include "hvdrun/types.h"

#include <gtest/gtest.h>

namespace hvdrun {
namespace {

constexpr DataType kAllDataTypes[] = {DataType::kFloat32,  DataType::kFloat64, DataType::kFloat16,
                                      DataType::kBFloat16, DataType::kInt32,   DataType::kInt64};
constexpr ReduceOp kAllReduceOps[] = {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMin, ReduceOp::kMax,
                                      ReduceOp::kProduct};
constexpr BackendKind kAllBackends[] = {BackendKind::kGloo, BackendKind::kMpi, BackendKind::kNccl};

TEST(DataTypeTest, SizesAreTheElementWidths) {
  EXPECT_EQ(DataTypeSize(DataType::kFloat32), 4U);
  EXPECT_EQ(DataTypeSize(DataType::kFloat64), 8U);
  EXPECT_EQ(DataTypeSize(DataType::kFloat16), 2U);
  EXPECT_EQ(DataTypeSize(DataType::kBFloat16), 2U);
  EXPECT_EQ(DataTypeSize(DataType::kInt32), 4U);
  EXPECT_EQ(DataTypeSize(DataType::kInt64), 8U);
  EXPECT_EQ(DataTypeSize(static_cast<DataType>(99)), 0U);
}

TEST(DataTypeTest, NamesAreLowerCase) {
  EXPECT_EQ(DataTypeName(DataType::kFloat32), "float32");
  EXPECT_EQ(DataTypeName(DataType::kBFloat16), "bfloat16");
  EXPECT_EQ(DataTypeName(DataType::kInt64), "int64");
  EXPECT_EQ(ReduceOpName(ReduceOp::kAverage), "average");
  EXPECT_EQ(BackendName(BackendKind::kNccl), "nccl");
  EXPECT_EQ(DataTypeName(static_cast<DataType>(99)), "unknown");
}

TEST(DataTypeTest, ParseRoundTripsEveryName) {
  for (DataType type : kAllDataTypes) EXPECT_EQ(ParseDataType(DataTypeName(type)), type);
  for (ReduceOp op : kAllReduceOps) EXPECT_EQ(ParseReduceOp(ReduceOpName(op)), op);
  for (BackendKind backend : kAllBackends) EXPECT_EQ(ParseBackend(BackendName(backend)), backend);
}

TEST(DataTypeTest, ParseRejectsUnknownNames) {
  EXPECT_EQ(ParseDataType("float"), std::nullopt);
  EXPECT_EQ(ParseDataType("Float32"), std::nullopt);
  EXPECT_EQ(ParseDataType(""), std::nullopt);
  EXPECT_EQ(ParseReduceOp("avg"), std::nullopt);
  EXPECT_EQ(ParseBackend("unknown"), std::nullopt);
  EXPECT_EQ(ParseBackend("GLOO"), std::nullopt);
}

}  // namespace
}  // namespace hvdrun
