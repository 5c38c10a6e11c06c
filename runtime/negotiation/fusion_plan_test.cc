#include "runtime/negotiation/fusion_plan.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace hvdrun {
namespace {

TensorRequest Req(size_t bytes, DataType type = DataType::kFloat32, ReduceOp op = ReduceOp::kSum) {
  TensorRequest request;
  request.type = type;
  request.op = op;
  request.count = bytes / DataTypeSize(type);
  return request;
}

std::vector<std::vector<size_t>> Members(const std::vector<FusedResponse>& plan) {
  std::vector<std::vector<size_t>> members;
  members.reserve(plan.size());
  for (const FusedResponse& response : plan) members.push_back(response.members);
  return members;
}

using Groups = std::vector<std::vector<size_t>>;

TEST(FusionPlan, ThresholdZeroIsOneResponsePerRequest) {
  EXPECT_EQ(Members(PlanFusion({Req(16), Req(16), Req(16)}, 0)), (Groups{{0}, {1}, {2}}));
}

TEST(FusionPlan, ThresholdBoundaries) {
  // Exactly at the threshold joins; a byte over does not.
  EXPECT_EQ(Members(PlanFusion({Req(64), Req(64)}, 128)), (Groups{{0, 1}}));
  EXPECT_EQ(Members(PlanFusion({Req(64), Req(64)}, 127)), (Groups{{0}, {1}}));
  // A request larger than the threshold is a response of its own.
  EXPECT_EQ(Members(PlanFusion({Req(32), Req(1024), Req(32)}, 128)), (Groups{{0}, {1}, {2}}));
}

TEST(FusionPlan, LookAheadPastOtherTypesWithinTheThreshold) {
  // float32 and float16 gradients interleaved, as mixed precision gives them.
  const std::vector<TensorRequest> ready = {Req(32), Req(32, DataType::kFloat16), Req(32),
                                            Req(32, DataType::kFloat16), Req(32)};
  EXPECT_EQ(Members(PlanFusion(ready, 1024)), (Groups{{0, 2, 4}, {1, 3}}));
  // The skipped bytes count: with room for 64 bytes, tensor 0 reaches past one float16 tensor to
  // tensor 2, and then the skipped bytes and the response fill the threshold.
  EXPECT_EQ(Members(PlanFusion(ready, 64)), (Groups{{0, 2}, {1, 3}, {4}}));
  EXPECT_EQ(Members(PlanFusion(ready, 48)), (Groups{{0}, {1}, {2}, {3}, {4}}));
}

TEST(FusionPlan, OperationsDoNotMix) {
  const std::vector<TensorRequest> ready = {Req(16), Req(16, DataType::kFloat32, ReduceOp::kAverage),
                                            Req(16)};
  EXPECT_EQ(Members(PlanFusion(ready, 1024)), (Groups{{0, 2}, {1}}));
}

TEST(FusionPlan, CompressionFormatsDoNotMix) {
  std::vector<TensorRequest> ready = {Req(16), Req(16), Req(16), Req(16)};
  ready[0].compression = CompressionFormat::kFloat8E4M3;
  ready[2].compression = CompressionFormat::kFloat8E4M3;
  ready[3].compression = CompressionFormat::kFloat16;
  EXPECT_EQ(Members(PlanFusion(ready, 1024)), (Groups{{0, 2}, {1}, {3}}));
}

TEST(FusionPlan, OnlyAllreducesFuse) {
  std::vector<TensorRequest> ready = {Req(16), Req(16), Req(16)};
  ready[1].kind = CollectiveKind::kBroadcast;
  EXPECT_EQ(Members(PlanFusion(ready, 1024)), (Groups{{0, 2}, {1}}));
}

TEST(FusionPlan, MembersStartOnSixteenByteBoundaries) {
  const std::vector<FusedResponse> plan = PlanFusion({Req(4), Req(32), Req(20)}, 1024);
  ASSERT_EQ(plan.size(), 1U);
  EXPECT_EQ(plan[0].offsets, (std::vector<size_t>{0, 16, 48}));
  EXPECT_EQ(plan[0].bytes, 80U);
}

TEST(FusionPlan, EveryRequestOnceAndEveryResponseAlike) {
  std::mt19937 random(3);
  const DataType types[] = {DataType::kFloat32, DataType::kFloat16, DataType::kFloat64};
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<TensorRequest> ready;
    const size_t n = random() % 60;
    for (size_t i = 0; i < n; ++i) ready.push_back(Req(8 * (random() % 200), types[random() % 3]));
    const size_t threshold = 16 * (random() % 100);
    std::vector<int> seen(n, 0);
    size_t previous_first = 0;
    for (const FusedResponse& response : PlanFusion(ready, threshold)) {
      ASSERT_FALSE(response.members.empty());
      EXPECT_GE(response.members.front(), previous_first);
      previous_first = response.members.front();
      if (response.members.size() > 1) {
        EXPECT_LE(response.bytes, threshold);
      }
      for (size_t member : response.members) {
        ++seen[member];
        EXPECT_EQ(ready[member].type, ready[response.members.front()].type);
      }
    }
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1) << "request " << i << " in trial " << trial;
  }
}

TEST(FusionPlan, TheThresholdRoundsUpToWholeUnitsPerLocalRank) {
  EXPECT_EQ(EffectiveFusionThreshold(0, 4), 0U);
  EXPECT_EQ(EffectiveFusionThreshold(size_t{64} << 20, 1), size_t{64} << 20);
  EXPECT_EQ(EffectiveFusionThreshold(1000, 1), 1024U);
  EXPECT_EQ(EffectiveFusionThreshold(1000, 3), 1536U);
}

}  // namespace
}  // namespace hvdrun
