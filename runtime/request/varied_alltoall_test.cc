// Alltoalls whose ranks send different numbers of rows to each other (Runtime::AlltoallAsync), on 1-4
// ranks as threads over real TCP (Gloo), in both collective orders.
#include "runtime/request/varied_alltoall.h"

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

constexpr size_t kRow = 2;

// For the k-th alltoall rank r sends (r + 2 j + k) % 4 rows to rank j (none included); element e of
// those rows is 10000 k + 1000 r + 100 j + e.
size_t Rows(int from, int to, size_t k) {
  return (static_cast<size_t>(from) + 2 * static_cast<size_t>(to) + k) % 4;
}

std::vector<int64_t> Block(int from, int to, size_t k) {
  std::vector<int64_t> values(Rows(from, to, k) * kRow);
  for (size_t e = 0; e < values.size(); ++e) {
    values[e] = static_cast<int64_t>(10000 * k + 1000 * static_cast<size_t>(from) +
                                     100 * static_cast<size_t>(to) + e);
  }
  return values;
}

// What rank `rank` sends for the k-th alltoall, and its splits.
std::vector<int64_t> Send(int rank, int size, size_t k, std::vector<uint64_t>* splits) {
  std::vector<int64_t> send;
  splits->clear();
  for (int to = 0; to < size; ++to) {
    const std::vector<int64_t> block = Block(rank, to, k);
    send.insert(send.end(), block.begin(), block.end());
    splits->push_back(block.size());
  }
  return send;
}

void ExpectReceived(const AlltoallResult& result, int size, size_t k, int rank) {
  std::vector<int64_t> expected;
  std::vector<uint64_t> counts;
  for (int from = 0; from < size; ++from) {
    const std::vector<int64_t> block = Block(from, rank, k);
    expected.insert(expected.end(), block.begin(), block.end());
    counts.push_back(block.size());
  }
  std::vector<int64_t> got(result.data.size() / sizeof(int64_t));
  if (!got.empty()) std::memcpy(got.data(), result.data.data(), result.data.size());
  EXPECT_EQ(got, expected) << "alltoall " << k << " on rank " << rank;
  EXPECT_EQ(result.counts, counts) << "alltoall " << k << " on rank " << rank;
}

class VariedAlltoallTest : public ::testing::TestWithParam<int> {};

TEST_P(VariedAlltoallTest, NamedAlltoallsStartedInAnyOrderDeliverEveryRanksRows) {
  constexpr size_t kExchanges = 5;
  testing::RunRanks(
      GetParam(),
      [](Runtime& runtime) {
        for (unsigned step = 0; step < 2; ++step) {  // the names again, once completed
          std::vector<size_t> order(kExchanges);
          for (size_t k = 0; k < kExchanges; ++k) order[k] = k;
          std::mt19937 random(step * 31U + static_cast<unsigned>(runtime.rank()));
          std::shuffle(order.begin(), order.end(), random);
          std::vector<std::vector<int64_t>> sends(kExchanges);
          std::vector<std::vector<uint64_t>> splits(kExchanges);
          std::vector<AlltoallResult> results(kExchanges);
          std::vector<CollectiveHandle> handles(kExchanges);
          for (size_t k : order) {
            sends[k] = Send(runtime.rank(), runtime.size(), k, &splits[k]);
            handles[k] = runtime.AlltoallAsync("a" + std::to_string(k), sends[k].data(), splits[k],
                                               DataType::kInt64, kRow, &results[k]);
          }
          for (size_t k = 0; k < kExchanges; ++k) {
            ASSERT_TRUE(handles[k].Wait().ok()) << handles[k].Wait().message();
            ExpectReceived(results[k], runtime.size(), k, runtime.rank());
          }
        }
      },
      CollectiveOrder::kNegotiated);
}

TEST_P(VariedAlltoallTest, UnnamedAlltoallsInCallOrderAndNegotiated) {
  for (CollectiveOrder order : {CollectiveOrder::kCallOrder, CollectiveOrder::kNegotiated}) {
    testing::RunRanks(
        GetParam(),
        [](Runtime& runtime) {
          for (size_t k = 0; k < 4; ++k) {
            std::vector<uint64_t> splits;
            const std::vector<int64_t> send = Send(runtime.rank(), runtime.size(), k, &splits);
            AlltoallResult result;
            CollectiveHandle handle =
                runtime.AlltoallAsync(send.data(), splits, DataType::kInt64, kRow, &result);
            ASSERT_TRUE(handle.Wait().ok()) << handle.Wait().message();
            ExpectReceived(result, runtime.size(), k, runtime.rank());
          }
        },
        order);
  }
}

std::string RanksName(const ::testing::TestParamInfo<int>& param) { return std::to_string(param.param); }

INSTANTIATE_TEST_SUITE_P(Ranks, VariedAlltoallTest, ::testing::Values(1, 2, 3, 4), RanksName);

TEST(VariedAlltoall, BadSplitsAndRowsThatDifferFailThatAlltoallOnly) {
  testing::RunRanks(
      2,
      [](Runtime& runtime) {
        std::vector<float> send(6, 1.0F);
        AlltoallResult result;
        EXPECT_EQ(
            runtime.AlltoallAsync("s", send.data(), {6}, DataType::kFloat32, 1, &result).Wait().message(),
            "Alltoall('s'): 1 splits for a job of 2 ranks (one per rank)");
        EXPECT_EQ(
            runtime.AlltoallAsync("s", send.data(), {3, 3}, DataType::kFloat32, 2, &result).Wait().message(),
            "Alltoall('s'): split 0 of 3 elements is not whole rows of 2");
        Status status = runtime
                            .AlltoallAsync("m", send.data(), {2, 4}, DataType::kFloat32,
                                           runtime.rank() == 0 ? 1 : 2, &result)
                            .Wait();
        EXPECT_EQ(
            status.message(),
            "'m' was submitted as alltoall of float32 in rows of 1 by rank 0 but as alltoall of float32 in "
            "rows of 2 by rank 1");
        // Each rank sends 2 elements to rank 0 and 4 to rank 1.
        ASSERT_TRUE(
            runtime.AlltoallAsync("m", send.data(), {2, 4}, DataType::kFloat32, 2, &result).Wait().ok());
        EXPECT_EQ(result.counts,
                  (std::vector<uint64_t>{runtime.rank() == 0 ? 2U : 4U, runtime.rank() == 0 ? 2U : 4U}));
      },
      CollectiveOrder::kNegotiated);
}

}  // namespace
}  // namespace hvdrun
