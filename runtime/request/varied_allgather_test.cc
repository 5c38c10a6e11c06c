// Allgathers whose ranks give different numbers of rows (Runtime::AllgatherAsync with a result), on
// 1-4 ranks as threads over real TCP (Gloo), in both collective orders.
#include "runtime/request/varied_allgather.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

constexpr size_t kRow = 3;

// Rank r gives (r + k) % 3 rows for the k-th allgather; element j of its rows is 1000 k + 100 r + j.
std::vector<int32_t> Rows(int rank, size_t k) {
  std::vector<int32_t> values(((static_cast<size_t>(rank) + k) % 3) * kRow);
  for (size_t j = 0; j < values.size(); ++j) {
    values[j] = static_cast<int32_t>(1000 * k + 100 * static_cast<size_t>(rank) + j);
  }
  return values;
}

void ExpectGathered(const AllgatherResult& result, int size, size_t k, int on_rank) {
  std::vector<int32_t> expected;
  std::vector<uint64_t> counts;
  for (int rank = 0; rank < size; ++rank) {
    const std::vector<int32_t> rows = Rows(rank, k);
    expected.insert(expected.end(), rows.begin(), rows.end());
    counts.push_back(rows.size());
  }
  std::vector<int32_t> got(result.data.size() / sizeof(int32_t));
  if (!got.empty()) std::memcpy(got.data(), result.data.data(), result.data.size());
  EXPECT_EQ(got, expected) << "allgather " << k << " on rank " << on_rank;
  EXPECT_EQ(result.counts, counts) << "allgather " << k << " on rank " << on_rank;
}

class VariedAllgatherTest : public ::testing::TestWithParam<int> {};

TEST_P(VariedAllgatherTest, NamedAllgathersStartedInAnyOrderGatherEveryRanksRows) {
  constexpr size_t kGathers = 5;
  testing::RunRanks(
      GetParam(),
      [](Runtime& runtime) {
        for (unsigned step = 0; step < 2; ++step) {
          std::vector<size_t> order(kGathers);
          for (size_t k = 0; k < kGathers; ++k) order[k] = k;
          std::mt19937 random(step * 17U + static_cast<unsigned>(runtime.rank()));
          std::shuffle(order.begin(), order.end(), random);
          std::vector<std::vector<int32_t>> sends(kGathers);
          std::vector<AllgatherResult> results(kGathers);
          std::vector<CollectiveHandle> handles(kGathers);
          for (size_t k : order) {
            sends[k] = Rows(runtime.rank(), k);
            handles[k] = runtime.AllgatherAsync("g" + std::to_string(k), sends[k].data(), sends[k].size(),
                                                DataType::kInt32, kRow, &results[k]);
          }
          for (size_t k = 0; k < kGathers; ++k) {
            ASSERT_TRUE(handles[k].Wait().ok()) << handles[k].Wait().message();
            ExpectGathered(results[k], runtime.size(), k, runtime.rank());
          }
        }
      },
      CollectiveOrder::kNegotiated);
}

TEST_P(VariedAllgatherTest, UnnamedAllgathersInCallOrderAndNegotiated) {
  for (CollectiveOrder order : {CollectiveOrder::kCallOrder, CollectiveOrder::kNegotiated}) {
    testing::RunRanks(
        GetParam(),
        [](Runtime& runtime) {
          for (size_t k = 0; k < 3; ++k) {
            const std::vector<int32_t> send = Rows(runtime.rank(), k);
            AllgatherResult result;
            ASSERT_TRUE(runtime.AllgatherAsync(send.data(), send.size(), DataType::kInt32, kRow, &result)
                            .Wait()
                            .ok());
            ExpectGathered(result, runtime.size(), k, runtime.rank());
          }
        },
        order);
  }
}

std::string RanksName(const ::testing::TestParamInfo<int>& param) { return std::to_string(param.param); }

INSTANTIATE_TEST_SUITE_P(Ranks, VariedAllgatherTest, ::testing::Values(1, 2, 3, 4), RanksName);

TEST(VariedAllgather, RowsThatDifferBetweenRanksFailThatAllgatherOnly) {
  testing::RunRanks(
      2,
      [](Runtime& runtime) {
        std::vector<float> send(6, 1.0F);
        AllgatherResult result;
        Status status = runtime
                            .AllgatherAsync("m", send.data(), send.size(), DataType::kFloat32,
                                            runtime.rank() == 0 ? 2 : 3, &result)
                            .Wait();
        EXPECT_EQ(
            status.message(),
            "'m' was submitted as allgather of float32 in rows of 2 by rank 0 but as allgather of float32 in "
            "rows of 3 by rank 1");
        EXPECT_NE(runtime.AllgatherAsync("n", send.data(), 5, DataType::kFloat32, 2, &result)
                      .Wait()
                      .message()
                      .find("5 elements are not whole rows of 2"),
                  std::string::npos);
        ASSERT_TRUE(runtime.AllgatherAsync("m", send.data(), 6, DataType::kFloat32, 2, &result).Wait().ok());
        EXPECT_EQ(result.counts, (std::vector<uint64_t>{6, 6}));
      },
      CollectiveOrder::kNegotiated);
}

}  // namespace
}  // namespace hvdrun
