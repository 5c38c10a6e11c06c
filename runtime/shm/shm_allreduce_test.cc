#include "runtime/shm/shm_allreduce.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/reduction_kernels.h"
#include "runtime/shm/shm_test_group.h"

namespace hvdrun {
namespace {

TEST(ShmAllreduceSliceTest, SlicesCoverTheChunkInOrderOn64ByteBoundaries) {
  for (size_t element : {size_t{2}, size_t{4}, size_t{8}}) {
    for (int slices = 1; slices <= 4; ++slices) {
      for (size_t count :
           {size_t{0}, size_t{1}, size_t{7}, size_t{31}, size_t{33}, size_t{1000}, size_t{1001}}) {
        EXPECT_EQ(ShmAllreduce::SliceBegin(count, element, slices, 0), 0U);
        EXPECT_EQ(ShmAllreduce::SliceBegin(count, element, slices, slices), count);
        for (int slice = 1; slice < slices; ++slice) {
          const size_t begin = ShmAllreduce::SliceBegin(count, element, slices, slice);
          EXPECT_LE(ShmAllreduce::SliceBegin(count, element, slices, slice - 1), begin);
          EXPECT_TRUE(begin == count || begin * element % 64 == 0)
              << "element " << element << ", count " << count << ", slice " << slice << " of " << slices;
        }
      }
    }
  }
}

// Values every type holds exactly, so that every op's result is exact: small integers, distinct
// per rank and element, of both signs.
double Input(int rank, size_t i) {
  return static_cast<double>(static_cast<int>((i * 7 + static_cast<size_t>(rank) * 13) % 23) - 11);
}

template <typename T>
T FromDouble(double value) {
  return ElementArithmetic<T>::Narrow(static_cast<typename ElementArithmetic<T>::Compute>(value));
}

template <typename T>
double ToDouble(T value) {
  return static_cast<double>(ElementArithmetic<T>::Widen(value));
}

double Expected(ReduceOp op, int ranks, size_t i, bool integer) {
  double result = Input(0, i);
  for (int rank = 1; rank < ranks; ++rank) {
    const double value = Input(rank, i);
    if (op == ReduceOp::kMin) {
      result = std::min(result, value);
    } else if (op == ReduceOp::kMax) {
      result = std::max(result, value);
    } else {
      result += value;
    }
  }
  if (op == ReduceOp::kAverage) result = integer ? std::trunc(result / ranks) : result / ranks;
  return result;
}

// Every type and op, counts around the slot (chunk) and slice boundaries, in place and not, through
// slots of 256 bytes, so that a buffer crosses many chunks and both sets of slots.
class ShmAllreduceTest : public ::testing::TestWithParam<int> {};

TEST_P(ShmAllreduceTest, EveryTypeOpAndCountAroundTheBoundariesIsExact) {
  const int ranks = GetParam();
  constexpr size_t kSlot = 256;
  testing::RunShmRanks(ranks, kSlot, [ranks](std::unique_ptr<ShmSegment>& segment) {
    const int me = segment->local_rank();
    ShmAllreduce allreduce(std::move(segment), ranks);
    for (DataType type : {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16,
                          DataType::kInt32, DataType::kInt64}) {
      WithElementType(type, [&]<typename T>() {
        const size_t per_slot = kSlot / sizeof(T);
        for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kAverage}) {
          for (size_t count : {size_t{1}, size_t{3}, per_slot / 4 - 1, per_slot / 4 + 1, per_slot - 1,
                               per_slot, per_slot + 1, 3 * per_slot + 5, 40 * per_slot + 13}) {
            for (bool in_place : {true, false}) {
              std::vector<T> send(count);
              for (size_t i = 0; i < count; ++i) send[i] = FromDouble<T>(Input(me, i));
              const std::vector<T> original = send;
              std::vector<T> recv(count);
              T* out = in_place ? send.data() : recv.data();
              Status status = allreduce.Allreduce(send.data(), out, count, type, op);
              ASSERT_TRUE(status.ok()) << status.message();
              const bool integer = type == DataType::kInt32 || type == DataType::kInt64;
              for (size_t i = 0; i < count; ++i) {
                // An average rounds to the type once (a sum of these values is exact in every type).
                ASSERT_EQ(ToDouble(out[i]), ToDouble(FromDouble<T>(Expected(op, ranks, i, integer))))
                    << "rank " << me << ", " << DataTypeName(type) << " " << ReduceOpName(op) << ", count "
                    << count << (in_place ? " in place" : "") << ", element " << i;
              }
              if (!in_place) {
                ASSERT_EQ(std::memcmp(send.data(), original.data(), count * sizeof(T)), 0) << "send changed";
              }
            }
          }
        }
      });
    }
  });
}

std::string RanksName(const ::testing::TestParamInfo<int>& param) {
  return "ranks" + std::to_string(param.param);
}

INSTANTIATE_TEST_SUITE_P(Ranks, ShmAllreduceTest, ::testing::Values(1, 2, 3, 4), RanksName);

TEST(ShmAllreduceTest, EveryRankGetsTheSameBitsForValuesThatRound) {
  constexpr int kRanks = 3;
  constexpr size_t kCount = 10007;
  std::vector<std::vector<uint32_t>> results(kRanks);  // the sums' bits
  testing::RunShmRanks(kRanks, 4096, [&](std::unique_ptr<ShmSegment>& segment) {
    const int me = segment->local_rank();
    ShmAllreduce allreduce(std::move(segment), kRanks);
    std::vector<float> values(kCount);
    for (size_t i = 0; i < kCount; ++i) values[i] = 1.0F / static_cast<float>(i + 3 + me);
    ASSERT_TRUE(
        allreduce.Allreduce(values.data(), values.data(), kCount, DataType::kFloat32, ReduceOp::kSum).ok());
    std::vector<uint32_t> bits(kCount);
    std::memcpy(bits.data(), values.data(), kCount * sizeof(float));
    results[static_cast<size_t>(me)] = bits;
  });
  for (size_t rank = 1; rank < kRanks; ++rank) EXPECT_EQ(results[0], results[rank]) << "rank " << rank;
}

}  // namespace
}  // namespace hvdrun
