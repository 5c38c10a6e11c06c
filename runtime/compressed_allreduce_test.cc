#include "runtime/compressed_allreduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/backend_test_ranks.h"

namespace hvdrun {
namespace {

using testing::RunBackendRanks;

constexpr WireFormat kFormats[] = {WireFormat::kFloat16, WireFormat::kBFloat16, WireFormat::kFloat8E4M3,
                                   WireFormat::kFloat8E5M2};

// Gradient-like values: each run of 1024 elements has its own magnitude, from 1e-6 to 1e-1 (the
// spread of a network's layers), times a sign and factor that differ by rank and element.
double Magnitude(size_t i) { return std::pow(10.0, -6.0 + static_cast<double>((i / 1024) % 6)); }
float Value(int rank, size_t i) {
  const double factor = std::sin(static_cast<double>(i) * 0.37 + rank * 1.91);
  return static_cast<float>(Magnitude(i) * factor);
}

// Significand bits of each format, for the bounds.
int MantissaBits(WireFormat format) {
  switch (format) {
    case WireFormat::kFloat16:
      return 10;
    case WireFormat::kBFloat16:
      return 7;
    case WireFormat::kFloat8E4M3:
      return 3;
    case WireFormat::kFloat8E5M2:
      return 2;
  }
  return 0;
}

// Runs Reduce on `size` Gloo ranks (threads over TCP) and returns each rank's result.
std::vector<std::vector<float>> ReduceOnRanks(int size, size_t count, ReduceOp op,
                                              const CompressionOptions& options,
                                              std::vector<double>* wire_ratio = nullptr) {
  std::vector<std::vector<float>> results(static_cast<size_t>(size));
  std::mutex mutex;
  RunBackendRanks(BackendKind::kGloo, size, [&](Backend& backend, const BackendContext& context) {
    std::vector<float> values(count);
    for (size_t i = 0; i < count; ++i) values[i] = Value(context.rank, i);
    CompressedAllreduce allreduce(context.rank, context.size, options);
    Status status = allreduce.Allreduce(backend, values.data(), values.data(), count, DataType::kFloat32, op,
                                        options.format);
    EXPECT_TRUE(status.ok()) << "rank " << context.rank << ": " << status.message();
    const std::lock_guard<std::mutex> lock(mutex);
    results[static_cast<size_t>(context.rank)] = values;
    if (wire_ratio != nullptr && context.rank == 0) {
      const CompressionCounters counters = allreduce.counters();
      wire_ratio->push_back(static_cast<double>(counters.wire_bytes) /
                            static_cast<double>(counters.float32_wire_bytes));
    }
  });
  return results;
}

// Every rank holds the same result, bit for bit, within the format's bound of the exact one:
//   16-bit: each input and each of the N - 1 partial sums rounded once, relative to the inputs'
//   magnitudes (plus half fp16's smallest subnormal per rounding, which small gradients reach);
//   fp8: each rank's value within half a step of its block's scaled range (at most 2^-m of the
//   block's largest value), and the owner's sum within the same of the sum's.
TEST(CompressedAllreduceTest, EveryFormatIsWithinItsBoundOfTheExactResultOnEveryRank) {
  for (WireFormat format : kFormats) {
    for (int size = 1; size <= 4; ++size) {
      for (size_t count : {size_t{1}, size_t{7}, size_t{1000}, size_t{100'003}}) {
        for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage}) {
          CompressionOptions options;
          options.format = CompressionFormatOf(format);
          const std::vector<std::vector<float>> results = ReduceOnRanks(size, count, op, options);
          const std::string what = std::string(WireFormatName(format)) + " " + std::to_string(size) +
                                   " ranks, " + std::to_string(count) + " elements, " +
                                   std::string(ReduceOpName(op));
          const double divisor = op == ReduceOp::kAverage ? size : 1;
          const double unit = std::ldexp(1.0, -MantissaBits(format));
          for (size_t i = 0; i < count; ++i) {
            double exact = 0;
            double magnitudes = 0;
            for (int rank = 0; rank < size; ++rank) {
              exact += Value(rank, i);
              magnitudes += std::fabs(Value(rank, i));
            }
            double bound = 0;  // in the result's terms
            if (WireFormatSize(format) == 2) {
              const double floor = format == WireFormat::kFloat16 ? 0x1p-25 : 0.0;
              bound = (size + 1) * (unit * magnitudes / divisor + floor);
            } else {
              bound = unit * (size + 1) * size * Magnitude(i) / divisor;
            }
            const double error = std::fabs(static_cast<double>(results[0][i]) - exact / divisor);
            ASSERT_LE(error, bound) << what << ": element " << i << " is " << results[0][i] << ", exact "
                                    << exact / divisor;
          }
          for (int rank = 1; rank < size; ++rank) {
            ASSERT_EQ(0, std::memcmp(results[0].data(), results[static_cast<size_t>(rank)].data(), count * 4))
                << what << ": rank " << rank << " differs from rank 0";
          }
        }
      }
    }
  }
}

TEST(CompressedAllreduceTest, WireBytesAreAHalfAndAQuarterOfFloat32s) {
  for (int size = 2; size <= 4; ++size) {
    for (WireFormat format : kFormats) {
      CompressionOptions options;
      options.format = CompressionFormatOf(format);
      std::vector<double> ratio;
      ReduceOnRanks(size, size_t{1} << 20, ReduceOp::kAverage, options, &ratio);
      ASSERT_EQ(ratio.size(), 1U);
      const double limit = WireFormatSize(format) == 2 ? 0.51 : 0.26;
      EXPECT_LE(ratio[0], limit) << WireFormatName(format) << " on " << size << " ranks";
      EXPECT_GT(ratio[0], limit - 0.02)
          << WireFormatName(format) << " on " << size << " ranks: counted too little";
    }
  }
}

// Gradients about 1e-4, below E4M3's smallest subnormal (2^-9, 0.002) without a scale: the naive
// fp8 allreduce returns zeros, which is why the lab's naive fp8 run stays at chance; the safeguarded
// one keeps them.
TEST(CompressedAllreduceTest, NaiveFloat8LosesSmallGradientsAndScalingKeepsThem) {
  const size_t count = 4096;
  double naive_largest = 0;
  double scaled_error = 0;
  double scaled_magnitude = 0;
  RunBackendRanks(BackendKind::kGloo, 2, [&](Backend& backend, const BackendContext& context) {
    std::vector<float> gradients(count);
    for (size_t i = 0; i < count; ++i) {
      gradients[i] = 1e-4f * std::sin(static_cast<float>(i) + static_cast<float>(context.rank));
    }
    std::vector<float> naive = gradients;
    std::vector<float> scaled = gradients;
    CompressionOptions off;
    off.format = CompressionFormat::kFloat8E4M3;
    off.scaling = false;
    off.float32_sums = false;
    off.error_feedback = false;
    CompressionOptions safeguarded;
    safeguarded.format = CompressionFormat::kFloat8E4M3;
    CompressedAllreduce naive_allreduce(context.rank, context.size, off);
    CompressedAllreduce safe_allreduce(context.rank, context.size, safeguarded);
    ASSERT_TRUE(naive_allreduce
                    .Allreduce(backend, naive.data(), naive.data(), count, DataType::kFloat32,
                               ReduceOp::kAverage, off.format)
                    .ok());
    ASSERT_TRUE(safe_allreduce
                    .Allreduce(backend, scaled.data(), scaled.data(), count, DataType::kFloat32,
                               ReduceOp::kAverage, safeguarded.format)
                    .ok());
    if (context.rank != 0) return;
    for (size_t i = 0; i < count; ++i) {
      const double exact =
          1e-4 * (std::sin(static_cast<double>(i)) + std::sin(static_cast<double>(i) + 1)) / 2;
      naive_largest = std::max(naive_largest, std::fabs(static_cast<double>(naive[i])));
      scaled_error += std::fabs(scaled[i] - exact);
      scaled_magnitude += std::fabs(exact);
    }
  });
  EXPECT_EQ(naive_largest, 0.0) << "every gradient flushed to zero";
  EXPECT_LT(scaled_error / scaled_magnitude, 0.05) << "mean relative error with the safeguards";
}

// A gradient that stays the same from step to step, different on each rank (so that the owner's
// sum is no exact double of one rank's code).
float Steady(int rank, size_t i) {
  return 0.3f + 0.001f * static_cast<float>(i % 7) + 0.0137f * static_cast<float>(rank);
}

// The same gradient reduced step after step: with error feedback the sum of the results stays
// within one step's rounding of the exact sum, however many steps; without, a rounding that always
// goes the same way adds up.
TEST(CompressedAllreduceTest, ErrorFeedbackConservesTheSumOverSteps) {
  constexpr int kSteps = 64;
  const size_t count = 2048;
  for (bool feedback : {true, false}) {
    double worst_drift = 0;
    RunBackendRanks(BackendKind::kGloo, 2, [&](Backend& backend, const BackendContext& context) {
      CompressionOptions options;
      options.format = CompressionFormat::kFloat8E4M3;
      options.error_feedback = feedback;
      CompressedAllreduce allreduce(context.rank, context.size, options);
      std::vector<double> sums(count, 0.0);
      for (int step = 0; step < kSteps; ++step) {
        std::vector<float> gradients(count);
        for (size_t i = 0; i < count; ++i) gradients[i] = Steady(context.rank, i);
        ASSERT_TRUE(allreduce
                        .Allreduce(backend, gradients.data(), gradients.data(), count, DataType::kFloat32,
                                   ReduceOp::kSum, options.format, {{"w", 0, count}})
                        .ok());
        for (size_t i = 0; i < count; ++i) sums[i] += gradients[i];
      }
      if (context.rank != 0) return;
      for (size_t i = 0; i < count; ++i) {
        const double exact = (static_cast<double>(Steady(0, i)) + Steady(1, i)) * kSteps;
        worst_drift = std::max(worst_drift, std::fabs(sums[i] - exact));
      }
    });
    // One step's error is at most 2^-4 of the sum's block maximum (0.62): about 0.04; 64 of them
    // in the same direction, 2.5.
    if (feedback) {
      EXPECT_LT(worst_drift, 0.1) << "with error feedback";
    } else {
      EXPECT_GT(worst_drift, 0.4) << "without error feedback the rounding adds up over " << kSteps
                                  << " steps";
    }
  }
}

// Other operations and types, and the format kNone, are the backend's own allreduce, exactly.
TEST(CompressedAllreduceTest, PassesWhatItDoesNotCompressToTheBackend) {
  RunBackendRanks(BackendKind::kGloo, 2, [&](Backend& backend, const BackendContext& context) {
    CompressionOptions fp8;
    fp8.format = CompressionFormat::kFloat8E4M3;
    CompressedAllreduce allreduce(context.rank, context.size, fp8);
    EXPECT_FALSE(CompressedAllreduce::Compresses(DataType::kFloat32, ReduceOp::kMax, fp8.format));
    EXPECT_FALSE(CompressedAllreduce::Compresses(DataType::kFloat64, ReduceOp::kSum, fp8.format));
    EXPECT_TRUE(CompressedAllreduce::Compresses(DataType::kFloat32, ReduceOp::kAverage, fp8.format));
    float largest = 0.123456789f * static_cast<float>(context.rank + 1);
    ASSERT_TRUE(
        allreduce.Allreduce(backend, &largest, &largest, 1, DataType::kFloat32, ReduceOp::kMax, fp8.format)
            .ok());
    EXPECT_EQ(largest, 0.123456789f * 2.0f);
    const double sent = 1.0 / 3.0;
    double sum = 0;
    ASSERT_TRUE(
        allreduce.Allreduce(backend, &sent, &sum, 1, DataType::kFloat64, ReduceOp::kSum, fp8.format).ok());
    EXPECT_EQ(sum, 2.0 / 3.0);
    EXPECT_EQ(allreduce.counters().compressed_bytes, 0U);

    CompressedAllreduce none(context.rank, context.size, CompressionOptions{});
    EXPECT_FALSE(
        CompressedAllreduce::Compresses(DataType::kFloat32, ReduceOp::kSum, CompressionFormat::kNone));
    float value = 0.1f;
    ASSERT_TRUE(none.Allreduce(backend, &value, &value, 1, DataType::kFloat32, ReduceOp::kSum,
                               CompressionFormat::kNone)
                    .ok());
    EXPECT_EQ(value, 0.2f);
  });
}

}  // namespace
}  // namespace hvdrun
