// Reducescatters (Runtime::ReducescatterAsync): Horovod's split of the rows, the fused layout, and
// negotiated reducescatters of every type and op at 1-4 ranks as threads, over Gloo and over the
// host's shared memory, alone and fused, against one process's computation.
#include "runtime/request/reducescatter_parts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/element_conversion.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

TEST(ReducescatterCounts, TheFirstRowsModSizeRanksGetOneRowMore) {
  EXPECT_EQ(ReducescatterCounts(30, 3, 4), (std::vector<uint64_t>{9, 9, 6, 6}));
  EXPECT_EQ(ReducescatterCounts(2, 1, 4), (std::vector<uint64_t>{1, 1, 0, 0}));
  EXPECT_EQ(ReducescatterCounts(8, 2, 2), (std::vector<uint64_t>{4, 4}));
  EXPECT_EQ(ReducescatterCounts(0, 5, 3), (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(ReducescatterCounts(7, 1, 1), (std::vector<uint64_t>{7}));
}

TEST(PlanFusedReducescatter, PacksEveryMembersPartRankByRank) {
  // Member 0 gives ranks 2 and 1 elements, member 1 gives 3 and 3.
  const FusedReducescatterLayout layout = PlanFusedReducescatter({{2, 1}, {3, 3}});
  EXPECT_EQ(layout.total, 9U);
  EXPECT_EQ(layout.block_counts, (std::vector<size_t>{5, 4}));
  EXPECT_EQ(layout.block_starts, (std::vector<uint64_t>{0, 5}));
  ASSERT_EQ(layout.pieces.size(), 4U);
  const std::vector<std::vector<uint64_t>> expected = {// member, rank, from, at, count
                                                       {0, 0, 0, 0, 2},
                                                       {1, 0, 0, 2, 3},
                                                       {0, 1, 2, 5, 1},
                                                       {1, 1, 3, 6, 3}};
  for (size_t i = 0; i < expected.size(); ++i) {
    const FusedReducescatterLayout::Piece& piece = layout.pieces[i];
    EXPECT_EQ((std::vector<uint64_t>{piece.member, static_cast<uint64_t>(piece.rank), piece.from, piece.at,
                                     piece.count}),
              expected[i])
        << "piece " << i;
  }
}

// Rank r's element i: exact in every type, and so are their sums and averages over 1-4 ranks.
double Value(int rank, size_t i) { return static_cast<double>((rank + 1) * static_cast<int>(i % 7 + 1)); }

double Expected(ReduceOp op, DataType type, int size, size_t i) {
  double sum = 0;
  double product = 1;
  double low = Value(0, i);
  double high = low;
  for (int rank = 0; rank < size; ++rank) {
    sum += Value(rank, i);
    product *= Value(rank, i);
    low = std::min(low, Value(rank, i));
    high = std::max(high, Value(rank, i));
  }
  switch (op) {
    case ReduceOp::kSum:
      return sum;
    case ReduceOp::kAverage:
      return type == DataType::kInt32 || type == DataType::kInt64 ? std::trunc(sum / size) : sum / size;
    case ReduceOp::kMin:
      return low;
    case ReduceOp::kProduct:
      return product;
    case ReduceOp::kMax:
      break;
  }
  return high;
}

struct Case {
  DataType type;
  ReduceOp op;
  size_t rows;
  size_t row;
};

// Every type with Sum and Average, Min, Max and Product on some; rows that split evenly, unevenly and not at
// all (fewer rows than ranks, none); several of one type and op, which fuse.
std::vector<Case> Cases() {
  std::vector<Case> cases;
  const DataType types[] = {DataType::kFloat32,  DataType::kFloat64, DataType::kFloat16,
                            DataType::kBFloat16, DataType::kInt32,   DataType::kInt64};
  const size_t rows[] = {13, 8, 1, 0, 6};
  size_t k = 0;
  for (DataType type : types) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage}) {
      cases.push_back({type, op, rows[k % 5], 1 + k % 3});
      ++k;
    }
  }
  // Of one type and op, to be fused: uneven, empty and even rows, as Horovod's fusion buffer packs them.
  for (size_t fused : {7, 2, 0, 11, 4}) cases.push_back({DataType::kFloat32, ReduceOp::kSum, fused, 2});
  for (size_t fused : {5, 3}) cases.push_back({DataType::kBFloat16, ReduceOp::kAverage, fused, 1});
  cases.push_back({DataType::kFloat32, ReduceOp::kMin, 9, 2});
  cases.push_back({DataType::kInt64, ReduceOp::kMax, 5, 3});
  // Products (exact in float64 up to 4 ranks), two to be fused.
  for (size_t fused : {9, 4}) cases.push_back({DataType::kFloat64, ReduceOp::kProduct, fused, 2});
  return cases;
}

// Submits every case, in an order of its own on each rank, then checks this rank's part of each.
void SubmitAndCheck(Runtime& runtime, int step) {
  const std::vector<Case> cases = Cases();
  std::vector<size_t> order(cases.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937 random(static_cast<unsigned>(runtime.rank()) * 31U + static_cast<unsigned>(step));
  std::shuffle(order.begin(), order.end(), random);
  std::vector<std::vector<std::byte>> sends(cases.size());
  std::vector<std::vector<std::byte>> recvs(cases.size());
  std::vector<CollectiveHandle> handles(cases.size());
  for (size_t c : order) {
    const Case& the = cases[c];
    const size_t count = the.rows * the.row;
    const size_t element = DataTypeSize(the.type);
    std::vector<double> values(count);
    for (size_t i = 0; i < count; ++i) values[i] = Value(runtime.rank(), i);
    sends[c].resize(std::max<size_t>(1, count * element));
    ConvertFromDouble(the.type, values.data(), sends[c].data(), count);
    recvs[c].resize(
        std::max<size_t>(1, runtime.ReducescatterCount(count, the.row, runtime.rank()) * element));
    handles[c] = runtime.ReducescatterAsync("rs" + std::to_string(c), sends[c].data(), recvs[c].data(), count,
                                            the.type, the.op, the.row);
  }
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& the = cases[c];
    const Status status = handles[c].Wait();
    ASSERT_TRUE(status.ok()) << status.message() << ", step " << step;
    const std::vector<uint64_t> counts = ReducescatterCounts(the.rows * the.row, the.row, runtime.size());
    size_t first = 0;
    for (int rank = 0; rank < runtime.rank(); ++rank) first += counts[static_cast<size_t>(rank)];
    const size_t own = counts[static_cast<size_t>(runtime.rank())];
    std::vector<double> result(own);
    ConvertToDouble(the.type, recvs[c].data(), result.data(), own);
    for (size_t i = 0; i < own; ++i) {
      ASSERT_EQ(result[i], Expected(the.op, the.type, runtime.size(), first + i))
          << "case " << c << " (" << DataTypeName(the.type) << " " << ReduceOpName(the.op) << ", " << the.rows
          << " rows of " << the.row << ") element " << i << " on rank " << runtime.rank() << " of "
          << runtime.size() << ", step " << step;
    }
  }
}

class NegotiatedReducescatter : public ::testing::TestWithParam<bool> {};

TEST_P(NegotiatedReducescatter, EveryTypeAndOpGivesEachRankItsRowsOfTheReduction) {
  const bool shared_memory = GetParam();
  for (int size = 1; size <= 4; ++size) {
    testing::RunRanks(
        size,
        [&](Runtime& runtime) {
          // Three steps of the same names: the later ones through the response cache.
          for (int step = 0; step < 3 && !::testing::Test::HasFatalFailure(); ++step) {
            SubmitAndCheck(runtime, step);
          }
        },
        CollectiveOrder::kNegotiated,
        [&](RuntimeOptions& options) {
          options.shared_memory = shared_memory;
          options.negotiation.cycle_time = std::chrono::milliseconds(5);
        });
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, NegotiatedReducescatter, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& backend) {
                           return backend.param ? "SharedMemory" : "Gloo";
                         });

TEST(NegotiatedReducescatterErrors, DifferentRowsOnTwoRanksNameBothAndTheRuntimeGoesOn) {
  testing::RunRanks(
      2,
      [](Runtime& runtime) {
        std::vector<float> send(12, 1.0F);
        std::vector<float> recv(12);
        const size_t row = runtime.rank() == 0 ? 2 : 3;
        const Status status = runtime.Reducescatter("mismatch", send.data(), recv.data(), send.size(),
                                                    DataType::kFloat32, ReduceOp::kSum, row);
        EXPECT_FALSE(status.ok());
        EXPECT_NE(status.message().find("in rows of 2"), std::string::npos) << status.message();
        EXPECT_NE(status.message().find("in rows of 3"), std::string::npos) << status.message();
        // The runtime goes on.
        std::vector<float> part(runtime.ReducescatterCount(12, 3, runtime.rank()));
        ASSERT_TRUE(
            runtime
                .Reducescatter("after", send.data(), part.data(), 12, DataType::kFloat32, ReduceOp::kSum, 3)
                .ok());
        EXPECT_EQ(part, std::vector<float>(6, 2.0F));
        // Bad arguments are refused on the calling rank alone.
        EXPECT_NE(
            runtime
                .Reducescatter("partial", send.data(), recv.data(), 5, DataType::kFloat32, ReduceOp::kSum, 2)
                .message()
                .find("not whole rows of 2"),
            std::string::npos);
        EXPECT_NE(
            runtime.Reducescatter("same", send.data(), send.data(), 12, DataType::kFloat32, ReduceOp::kSum, 1)
                .message()
                .find("must not overlap"),
            std::string::npos);
      },
      CollectiveOrder::kNegotiated);
}

}  // namespace
}  // namespace hvdrun
