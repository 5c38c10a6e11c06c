#include "runtime/compression/compressed_allreduce.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
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

// The fp8 allreduce with float32 sums as the header specifies it, one step of every rank at once,
// without pieces: each rank's values with its kept errors; each block's scale from the largest
// absolute value of the block over all ranks; each rank's codes, keeping what named tensors lost;
// each owner's chunk summed in float32 from every rank's codes, averaged, its kept errors added,
// encoded again with a scale of its own (keeping what it lost); every rank decodes every chunk.
class ReferenceFloat8Allreduce {
 public:
  ReferenceFloat8Allreduce(int size, const CompressionOptions& options)
      : size_(static_cast<size_t>(size)), options_(options), tensor_errors_(size_), chunk_errors_(size_) {}

  std::vector<float> Step(const std::vector<std::vector<float>>& inputs, ReduceOp op,
                          const std::vector<TensorSpan>& spans) {
    const WireFormat format = WireFormatOf(options_.format);
    const size_t count = inputs[0].size();
    const auto up = [](size_t a, size_t b) { return (a + b - 1) / b; };
    const size_t block = std::min<size_t>(1024, 4 * up(up(count, size_), 4));
    const size_t chunk = block * up(up(count, block), size_);
    const size_t padded = chunk * size_;
    std::vector<std::vector<float>> work(size_, std::vector<float>(padded, 0.0f));
    for (size_t r = 0; r < size_; ++r) {
      std::copy(inputs[r].begin(), inputs[r].end(), work[r].begin());
      for (const TensorSpan& span : spans) {
        if (!options_.error_feedback || span.name.empty()) continue;
        std::vector<float>& kept = tensor_errors_[r][span.name];
        kept.resize(span.count, 0.0f);
        for (size_t i = 0; i < span.count; ++i) work[r][span.offset + i] += kept[i];
      }
    }
    std::vector<float> scales(padded / block, 1.0f);
    for (size_t b = 0; options_.scaling && b < scales.size(); ++b) {
      float largest = 0;
      for (size_t r = 0; r < size_; ++r) largest = std::max(largest, AbsoluteMax(&work[r][b * block], block));
      scales[b] = WireScaleFor(format, largest, 1.0f);
    }
    std::vector<std::vector<uint8_t>> codes(size_, std::vector<uint8_t>(padded));
    std::vector<float> lost(padded);
    for (size_t r = 0; r < size_; ++r) {
      for (size_t b = 0; b < scales.size(); ++b) {
        EncodeToWireKeepingLoss(format, &work[r][b * block], block, scales[b], &codes[r][b * block],
                                &lost[b * block]);
      }
      for (const TensorSpan& span : spans) {
        if (!options_.error_feedback || span.name.empty()) continue;
        std::copy_n(&lost[span.offset], span.count, tensor_errors_[r][span.name].begin());
      }
    }
    std::string layout;
    for (const TensorSpan& span : spans) {
      if (span.name.empty()) {
        layout.clear();
        break;
      }
      layout += span.name + '\n' + std::to_string(span.count) + '\n';
    }
    std::vector<float> result(padded);
    std::vector<float> sum(block);
    std::vector<uint8_t> sum_codes(block);
    for (size_t owner = 0; owner < size_; ++owner) {
      std::vector<float>* kept = nullptr;
      if (options_.error_feedback && !layout.empty()) {
        kept = &chunk_errors_[owner][layout];
        kept->resize(chunk, 0.0f);
      }
      for (size_t at = owner * chunk; at < (owner + 1) * chunk; at += block) {
        std::fill(sum.begin(), sum.end(), 0.0f);
        for (size_t r = 0; r < size_; ++r) {
          DecodeAddFromWire(format, &codes[r][at], block, 1.0f / scales[at / block], sum.data());
        }
        for (float& value : sum) value /= op == ReduceOp::kAverage ? static_cast<float>(size_) : 1.0f;
        float* chunk_lost = kept == nullptr ? lost.data() : &(*kept)[at - owner * chunk];
        for (size_t i = 0; kept != nullptr && i < block; ++i) sum[i] += chunk_lost[i];
        const float scale =
            options_.scaling ? WireScaleFor(format, AbsoluteMax(sum.data(), block), 1.0f) : 1.0f;
        EncodeToWireKeepingLoss(format, sum.data(), block, scale, sum_codes.data(), chunk_lost);
        DecodeFromWire(format, sum_codes.data(), block, 1.0f / scale, &result[at]);
      }
    }
    result.resize(count);
    return result;
  }

 private:
  size_t size_;
  CompressionOptions options_;
  std::vector<std::map<std::string, std::vector<float>>> tensor_errors_;  // by rank
  std::vector<std::map<std::string, std::vector<float>>> chunk_errors_;   // by owner
};

// Cut into pieces (one block per piece, a few, or one piece) and pipelined, the fp8 allreduce gives
// the reference's results bit for bit on 1 to 4 ranks, over steps of error feedback, for sizes
// that fill no whole block, piece or chunk, with named and unnamed tensors.
TEST(CompressedAllreduceTest, PiecesGiveTheReferenceResultsBitForBit) {
  constexpr int kSteps = 3;
  struct Case {
    size_t count;
    size_t piece_elements;
    ReduceOp op;
    bool scaling;
    bool unnamed_middle;  // a tensor without a name (no feedback for it, nor for the owner's chunk)
  };
  std::vector<Case> cases;
  for (size_t count : {size_t{1}, size_t{7}, size_t{1000}, size_t{13'001}}) {
    for (size_t piece_elements : {size_t{1}, size_t{3000}, CompressedAllreduce::kPieceElements}) {
      cases.push_back({count, piece_elements, ReduceOp::kAverage, true, false});
      cases.push_back({count, piece_elements, ReduceOp::kSum, true, true});
    }
    cases.push_back({count, 1, ReduceOp::kSum, false, false});
  }
  for (int size = 1; size <= 4; ++size) {
    // results[case][step][rank]
    std::vector<std::vector<std::vector<std::vector<float>>>> results(
        cases.size(), std::vector<std::vector<std::vector<float>>>(
                          kSteps, std::vector<std::vector<float>>(static_cast<size_t>(size))));
    const auto inputs = [](const Case& c, int step, int rank) {
      std::vector<float> values(c.count);
      for (size_t i = 0; i < c.count; ++i) values[i] = Value(rank, i + 977 * static_cast<size_t>(step));
      return values;
    };
    const auto spans = [](const Case& c) {
      const size_t a = c.count / 3;
      const size_t b = 2 * c.count / 3;
      return std::vector<TensorSpan>{
          {"a", 0, a}, {c.unnamed_middle ? "" : "b", a, b - a}, {"c", b, c.count - b}};
    };
    RunBackendRanks(BackendKind::kGloo, size, [&](Backend& backend, const BackendContext& context) {
      for (size_t k = 0; k < cases.size(); ++k) {
        const Case& c = cases[k];
        CompressionOptions options;
        options.format = CompressionFormat::kFloat8E4M3;
        options.scaling = c.scaling;
        CompressedAllreduce allreduce(context.rank, context.size, options, c.piece_elements);
        for (int step = 0; step < kSteps; ++step) {
          std::vector<float> values = inputs(c, step, context.rank);
          const Status status = allreduce.Allreduce(backend, values.data(), values.data(), c.count,
                                                    DataType::kFloat32, c.op, options.format, spans(c));
          ASSERT_TRUE(status.ok()) << status.message();
          results[k][static_cast<size_t>(step)][static_cast<size_t>(context.rank)] = std::move(values);
        }
      }
    });
    for (size_t k = 0; k < cases.size(); ++k) {
      const Case& c = cases[k];
      CompressionOptions options;
      options.format = CompressionFormat::kFloat8E4M3;
      options.scaling = c.scaling;
      ReferenceFloat8Allreduce reference(size, options);
      for (int step = 0; step < kSteps; ++step) {
        std::vector<std::vector<float>> all(static_cast<size_t>(size));
        for (int rank = 0; rank < size; ++rank) all[static_cast<size_t>(rank)] = inputs(c, step, rank);
        const std::vector<float> expected = reference.Step(all, c.op, spans(c));
        for (int rank = 0; rank < size; ++rank) {
          const std::vector<float>& got = results[k][static_cast<size_t>(step)][static_cast<size_t>(rank)];
          ASSERT_EQ(got.size(), expected.size());
          EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)), 0)
              << size << " ranks, count " << c.count << ", pieces of " << c.piece_elements << ", "
              << ReduceOpName(c.op) << (c.scaling ? "" : ", unscaled")
              << (c.unnamed_middle ? ", unnamed middle" : "") << ", step " << step << ", rank " << rank;
        }
      }
    }
  }
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
