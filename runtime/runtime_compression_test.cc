// Compression through a whole Runtime (RuntimeOptions::compression), in both collective orders.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/in_memory_store.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

using testing::RunRanks;

constexpr size_t kTensorCount = 4096;  // two fp8 blocks per rank on 2 ranks: no padding
constexpr int kTensors = 3;

float Gradient(int rank, int tensor, size_t i) {
  return 0.01f * std::sin(static_cast<float>(i) * 0.1f + static_cast<float>(rank + 3 * tensor));
}

// fp8's float32 allreduces are compressed (fused named tensors in the negotiated order, each call
// in call order), every other allreduce is exact, and the counters and the rank's report say what
// was sent: about a quarter of float32's bytes.
TEST(RuntimeCompressionTest, Float32SumsAreCompressedInBothOrders) {
  for (CollectiveOrder order : {CollectiveOrder::kCallOrder, CollectiveOrder::kNegotiated}) {
    const std::string what = order == CollectiveOrder::kCallOrder ? "call order" : "negotiated";
    std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
    std::vector<CompressionCounters> counters(2);
    RunRanks(
        2,
        [&](Runtime& runtime) {
          std::vector<std::vector<float>> tensors(kTensors, std::vector<float>(kTensorCount));
          for (int t = 0; t < kTensors; ++t) {
            for (size_t i = 0; i < kTensorCount; ++i) tensors[t][i] = Gradient(runtime.rank(), t, i);
          }
          std::vector<CollectiveHandle> handles;
          for (int t = 0; t < kTensors; ++t) {
            float* values = tensors[t].data();
            handles.push_back(order == CollectiveOrder::kNegotiated
                                  ? runtime.AllreduceAsync("w" + std::to_string(t), values, values,
                                                           kTensorCount, DataType::kFloat32,
                                                           ReduceOp::kAverage)
                                  : runtime.AllreduceAsync(values, values, kTensorCount, DataType::kFloat32,
                                                           ReduceOp::kAverage));
          }
          for (CollectiveHandle& handle : handles) ASSERT_TRUE(handle.Wait().ok()) << what;
          for (int t = 0; t < kTensors; ++t) {
            for (size_t i = 0; i < kTensorCount; ++i) {
              const double exact = (Gradient(0, t, i) + static_cast<double>(Gradient(1, t, i))) / 2;
              // Each rank's value and the owner's sum within 2^-3 of their block's largest (0.01).
              ASSERT_NEAR(tensors[t][i], exact, 0.01 * 0x1p-3 * 3)
                  << what << " tensor " << t << " element " << i;
            }
          }
          const int32_t mine = 1000003 * (runtime.rank() + 1);
          int32_t sum = 0;
          ASSERT_TRUE(runtime.Allreduce(&mine, &sum, 1, DataType::kInt32, ReduceOp::kSum).ok());
          EXPECT_EQ(sum, 3000009) << what << ": int32 is not compressed";
          counters[static_cast<size_t>(runtime.rank())] = runtime.compression_counters();
          ASSERT_TRUE(runtime.SendReport(R"({"summary": {}})").ok());
        },
        order,
        [&](RuntimeOptions& options) {
          options.store = store;
          options.compression.format = CompressionFormat::kFloat8E4M3;
        });
    for (int rank = 0; rank < 2; ++rank) {
      const CompressionCounters& mine = counters[static_cast<size_t>(rank)];
      EXPECT_EQ(mine.compressed_bytes, kTensors * kTensorCount * sizeof(float)) << what;
      EXPECT_EQ(mine.float32_wire_bytes, kTensors * kTensorCount * sizeof(float)) << what << ": 2(N-1)/N = 1";
      const double ratio =
          static_cast<double>(mine.wire_bytes) / static_cast<double>(mine.float32_wire_bytes);
      EXPECT_GT(ratio, 0.25) << what;
      EXPECT_LE(ratio, 0.26) << what;
      StatusOr<std::string> sent =
          store->Get("report/" + std::to_string(rank), std::chrono::milliseconds(1000));
      ASSERT_TRUE(sent.ok()) << sent.status().message();
      const nlohmann::json compression = nlohmann::json::parse(sent.value())["libhvdrun"]["compression"];
      EXPECT_EQ(compression["format"], "fp8-e4m3") << what;
      EXPECT_EQ(compression["error_feedback"], true) << what;
      EXPECT_EQ(compression["wire_bytes"], mine.wire_bytes) << what;
      EXPECT_EQ(compression["float32_wire_bytes"], mine.float32_wire_bytes) << what;
    }
  }
}

// An allreduce's own format overrides the job's: fused with its like only, each within its format's
// bound, counted; the same name in two formats on two ranks fails with both descriptions.
TEST(RuntimeCompressionTest, PerCallCompressionOverridesTheJobsFormat) {
  const std::vector<std::pair<std::string, CompressionFormat>> calls = {
      {"fp8", CompressionFormat::kFloat8E4M3},
      {"exact", CompressionFormat::kNone},
      {"half", CompressionFormat::kFloat16},
      {"fp8-too", CompressionFormat::kFloat8E4M3}};
  std::vector<CompressionCounters> counters(2);
  std::vector<NegotiationCounters> negotiation(2);
  RunRanks(
      2,
      [&](Runtime& runtime) {
        std::vector<std::vector<float>> tensors(calls.size(), std::vector<float>(kTensorCount));
        std::vector<CollectiveHandle> handles;
        for (size_t t = 0; t < calls.size(); ++t) {
          for (size_t i = 0; i < kTensorCount; ++i) {
            tensors[t][i] = Gradient(runtime.rank(), static_cast<int>(t), i);
          }
          handles.push_back(runtime.AllreduceAsync(calls[t].first, tensors[t].data(), tensors[t].data(),
                                                   kTensorCount, DataType::kFloat32, ReduceOp::kAverage,
                                                   calls[t].second));
        }
        for (CollectiveHandle& handle : handles) ASSERT_TRUE(handle.Wait().ok());
        for (size_t t = 0; t < calls.size(); ++t) {
          // Bounds relative to the largest value (0.01): fp8 2^-3 per rounding, fp16 2^-10.
          const double bound = calls[t].second == CompressionFormat::kFloat8E4M3 ? 0.01 * 0x1p-3 * 3
                               : calls[t].second == CompressionFormat::kFloat16  ? 0.01 * 0x1p-10 * 2
                                                                                 : 1e-9;
          for (size_t i = 0; i < kTensorCount; ++i) {
            const int tensor = static_cast<int>(t);
            const float exact = (Gradient(0, tensor, i) + Gradient(1, tensor, i)) / 2;
            ASSERT_NEAR(tensors[t][i], exact, bound) << calls[t].first << " element " << i;
          }
        }
        counters[static_cast<size_t>(runtime.rank())] = runtime.compression_counters();
        negotiation[static_cast<size_t>(runtime.rank())] = runtime.negotiation_counters();

        float value = 1.0f;
        const CompressionFormat mine =
            runtime.rank() == 0 ? CompressionFormat::kFloat8E4M3 : CompressionFormat::kNone;
        const Status mismatch =
            runtime.Allreduce("mismatch", &value, &value, 1, DataType::kFloat32, ReduceOp::kSum, mine);
        EXPECT_FALSE(mismatch.ok());
        EXPECT_NE(mismatch.message().find("allreduce of float32 x 1 sum in fp8-e4m3"), std::string::npos)
            << mismatch.message();
        EXPECT_NE(mismatch.message().find("allreduce of float32 x 1 sum by"), std::string::npos)
            << mismatch.message();
      },
      CollectiveOrder::kNegotiated);
  for (size_t rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(counters[rank].compressed_bytes, 3 * kTensorCount * sizeof(float)) << "rank " << rank;
    EXPECT_EQ(negotiation[rank].tensors, 4U) << "rank " << rank;
  }
}

// A fused response copied through the fusion buffer leaves gaps between its members (their offsets
// are aligned); fp8's scaled blocks span them. What an earlier response left there (here 1e30) must
// not set a block's scale: the gaps are zeroed, else the members' small values flush to zero.
TEST(RuntimeCompressionTest, Fp8BlocksIgnoreWhatEarlierResponsesLeftInTheFusionBuffer) {
  RunRanks(
      2,
      [&](Runtime& runtime) {
        for (int round = 0; round < 3; ++round) {
          std::vector<std::vector<float>> large(2, std::vector<float>(8, 1e30f));
          std::vector<CollectiveHandle> handles;
          for (size_t t = 0; t < large.size(); ++t) {
            handles.push_back(runtime.AllreduceAsync("large" + std::to_string(t), large[t].data(),
                                                     large[t].data(), large[t].size(), DataType::kFloat32,
                                                     ReduceOp::kMax));
          }
          for (CollectiveHandle& handle : handles) ASSERT_TRUE(handle.Wait().ok());
          // Three floats each: 12 bytes, aligned to 16 in the fusion buffer.
          std::vector<std::vector<float>> small(
              3, std::vector<float>(3, 0.25f * static_cast<float>(runtime.rank() + 1)));
          handles.clear();
          for (size_t t = 0; t < small.size(); ++t) {
            handles.push_back(runtime.AllreduceAsync("small" + std::to_string(t), small[t].data(),
                                                     small[t].data(), small[t].size(), DataType::kFloat32,
                                                     ReduceOp::kAverage, CompressionFormat::kFloat8E4M3));
          }
          for (CollectiveHandle& handle : handles) ASSERT_TRUE(handle.Wait().ok());
          for (size_t t = 0; t < small.size(); ++t) {
            for (float value : small[t]) {
              ASSERT_NEAR(value, 0.375, 0.375 * 0x1p-3) << "round " << round << " tensor " << t;
            }
          }
        }
      },
      CollectiveOrder::kNegotiated);
}

}  // namespace
}  // namespace hvdrun
