// Horovod's prescale and postscale factors applied by the engine (Runtime::ScaleFactors): negotiated
// allreduces and reducescatters at 2 and 3 ranks as threads, over Gloo and the host's shared memory,
// fused and alone, in place and not, against one process's computation; factors that differ between
// ranks are an error naming both, and the runtime goes on.
#include "runtime/request/scale_factors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/element_conversion.h"
#include "runtime/request/reducescatter_parts.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

constexpr DataType kTypes[] = {DataType::kFloat32,  DataType::kFloat64, DataType::kFloat16,
                               DataType::kBFloat16, DataType::kInt32,   DataType::kInt64};
constexpr double kPrescale = 0.5;
constexpr double kPostscale = 3.0;

bool IsInteger(DataType type) { return type == DataType::kInt32 || type == DataType::kInt64; }

// Rank r's element i: whole numbers, so that every scaled sum is exact in every type.
double Value(int rank, size_t i) { return static_cast<double>((rank + 1) * static_cast<int>(i % 5 + 1)); }

// x times `factor` as the engine computes it (integers truncated toward zero).
double Scaled(DataType type, double x, double factor) {
  return IsInteger(type) ? std::trunc(x * factor) : x * factor;
}

// What every rank gets at element i of a sum (or, `average`, an average) over `size` ranks with the factors.
double Expected(DataType type, int size, size_t i, bool average) {
  double sum = 0;
  for (int rank = 0; rank < size; ++rank) sum += Scaled(type, Value(rank, i), kPrescale);
  if (average) sum = IsInteger(type) ? std::trunc(sum / size) : sum / size;
  return Scaled(type, sum, kPostscale);
}

std::vector<char> Inputs(DataType type, int rank, size_t count) {
  std::vector<double> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = Value(rank, i);
  std::vector<char> bytes(std::max<size_t>(1, count * DataTypeSize(type)));
  ConvertFromDouble(type, values.data(), bytes.data(), count);
  return bytes;
}

std::vector<double> Doubles(DataType type, const std::vector<char>& bytes, size_t count) {
  std::vector<double> values(count);
  ConvertToDouble(type, bytes.data(), values.data(), count);
  return values;
}

// Allreduces of every type, submitted together (fused where the cycle finds them ready together), half
// in place, one sum and one average each; then one alone, out of place.
void ScaledAllreduces(Runtime& runtime) {
  const Runtime::ScaleFactors factors{kPrescale, kPostscale};
  constexpr size_t kCount = 13;
  struct Submitted {
    DataType type;
    bool average;
    std::vector<char> send;
    std::vector<char> recv;
    CollectiveHandle handle;
  };
  std::vector<Submitted> all;
  all.reserve(2 * std::size(kTypes));
  for (DataType type : kTypes) {
    for (bool average : {false, true}) {
      all.push_back({type, average, Inputs(type, runtime.rank(), kCount), {}, {}});
      Submitted& s = all.back();
      s.recv = average ? std::vector<char>(s.send.size()) : s.send;
      const std::string name = std::string(DataTypeName(type)) + (average ? ".average" : ".sum");
      s.handle = runtime.AllreduceAsync(name, s.send.data(), average ? s.recv.data() : s.send.data(), kCount,
                                        type, average ? ReduceOp::kAverage : ReduceOp::kSum,
                                        CompressionFormat::kNone, factors);
    }
  }
  for (Submitted& s : all) {
    const Status status = s.handle.Wait();
    ASSERT_TRUE(status.ok()) << status.message();
    const std::vector<char>& result = s.average ? s.recv : s.send;
    const std::vector<double> got = Doubles(s.type, result, kCount);
    for (size_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(got[i], Expected(s.type, runtime.size(), i, s.average))
          << DataTypeName(s.type) << (s.average ? " average" : " sum") << " element " << i << " on rank "
          << runtime.rank() << " of " << runtime.size();
    }
    if (s.average) {
      EXPECT_EQ(s.send, Inputs(s.type, runtime.rank(), kCount)) << "the input is unchanged";
    }
  }
  const std::vector<char> send = Inputs(DataType::kInt32, runtime.rank(), kCount);
  std::vector<char> recv(send.size());
  ASSERT_TRUE(runtime
                  .AllreduceAsync("alone", send.data(), recv.data(), kCount, DataType::kInt32, ReduceOp::kSum,
                                  CompressionFormat::kNone, factors)
                  .Wait()
                  .ok());
  EXPECT_EQ(send, Inputs(DataType::kInt32, runtime.rank(), kCount));
  EXPECT_EQ(Doubles(DataType::kInt32, recv, kCount)[4], Expected(DataType::kInt32, runtime.size(), 4, false));
}

// Two reducescatters of 7 rows of 2 (uneven), submitted together, with the factors.
void ScaledReducescatters(Runtime& runtime) {
  constexpr size_t kRow = 2;
  constexpr size_t kCount = 7 * kRow;
  const std::vector<uint64_t> counts = ReducescatterCounts(kCount, kRow, runtime.size());
  size_t first = 0;
  for (int rank = 0; rank < runtime.rank(); ++rank) first += counts[static_cast<size_t>(rank)];
  const size_t own = counts[static_cast<size_t>(runtime.rank())];
  std::vector<std::vector<char>> sends;
  std::vector<std::vector<char>> recvs;
  std::vector<CollectiveHandle> handles;
  for (DataType type : {DataType::kFloat64, DataType::kInt64}) {
    sends.push_back(Inputs(type, runtime.rank(), kCount));
    recvs.emplace_back(std::max<size_t>(1, own * DataTypeSize(type)));
    handles.push_back(runtime.ReducescatterAsync("rs." + std::string(DataTypeName(type)), sends.back().data(),
                                                 recvs.back().data(), kCount, type, ReduceOp::kSum, kRow,
                                                 Runtime::ScaleFactors{kPrescale, kPostscale}));
  }
  size_t at = 0;
  for (DataType type : {DataType::kFloat64, DataType::kInt64}) {
    const Status status = handles[at].Wait();
    ASSERT_TRUE(status.ok()) << status.message();
    const std::vector<double> got = Doubles(type, recvs[at], own);
    for (size_t i = 0; i < own; ++i) {
      ASSERT_EQ(got[i], Expected(type, runtime.size(), first + i, false))
          << DataTypeName(type) << " reducescatter element " << first + i << " on rank " << runtime.rank();
    }
    ++at;
  }
}

TEST(ScaleValues, HostMemoryIsScaledInPlaceAndAFactorOfOneLeavesItAlone) {
  TensorRequest request;
  EXPECT_FALSE(Scaled(request));
  request.postscale = 2.0;
  EXPECT_TRUE(Scaled(request));
  std::vector<int64_t> values = {-5, 5, 7};
  ASSERT_TRUE(ScaleValues(HostMemory::Get(), values.data(), 3, DataType::kInt64, 0.5).ok());
  EXPECT_EQ(values, (std::vector<int64_t>{-2, 2, 3}));
  ASSERT_TRUE(ScaleValues(HostMemory::Get(), values.data(), 3, DataType::kInt64, 1.0).ok());
  EXPECT_EQ(values, (std::vector<int64_t>{-2, 2, 3}));
}

class ScaleFactorsTest : public ::testing::TestWithParam<bool> {};

TEST_P(ScaleFactorsTest, AllreducesAndReducescattersAreScaledByTheEngine) {
  const bool shared_memory = GetParam();
  for (int size : {2, 3}) {
    testing::RunRanks(
        size,
        [](Runtime& runtime) {
          // Twice: the second time through the response cache.
          for (int step = 0; step < 2 && !::testing::Test::HasFatalFailure(); ++step) {
            ScaledAllreduces(runtime);
            ScaledReducescatters(runtime);
          }
        },
        CollectiveOrder::kNegotiated,
        [&](RuntimeOptions& options) {
          options.shared_memory = shared_memory;
          options.negotiation.cycle_time = std::chrono::milliseconds(5);
        });
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ScaleFactorsTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& backend) {
                           return backend.param ? "SharedMemory" : "Gloo";
                         });

TEST(ScaleFactorsErrors, FactorsThatDifferBetweenRanksNameBothAndTheRuntimeGoesOn) {
  testing::RunRanks(
      2,
      [](Runtime& runtime) {
        std::vector<float> values(4, 1.0F);
        const double prescale = runtime.rank() == 0 ? 0.5 : 1.0;
        const Status status =
            runtime
                .AllreduceAsync("differs", values.data(), values.data(), 4, DataType::kFloat32,
                                ReduceOp::kSum, CompressionFormat::kNone,
                                Runtime::ScaleFactors{prescale, 2.0})
                .Wait();
        EXPECT_FALSE(status.ok());
        EXPECT_NE(status.message().find("scaled by 0.5 then 2"), std::string::npos) << status.message();
        EXPECT_NE(status.message().find("scaled by 1 then 2"), std::string::npos) << status.message();
        std::vector<float> after(4, 1.0F);
        ASSERT_TRUE(
            runtime.Allreduce("after", after.data(), after.data(), 4, DataType::kFloat32, ReduceOp::kSum)
                .ok());
        EXPECT_EQ(after, std::vector<float>(4, 2.0F));
        // A factor that is not a number is refused on the calling rank alone.
        EXPECT_NE(
            runtime
                .AllreduceAsync("nan", values.data(), values.data(), 4, DataType::kFloat32, ReduceOp::kSum,
                                CompressionFormat::kNone, Runtime::ScaleFactors{1.0, NAN})
                .Wait()
                .message()
                .find("the postscale factor nan is not a finite number"),
            std::string::npos);
      },
      CollectiveOrder::kNegotiated);
}

}  // namespace
}  // namespace hvdrun
