#include "runtime/backend_conformance.h"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "runtime/backend_conformance_values.h"
#include "runtime/element_conversion.h"

namespace hvdrun::testing {
namespace {

class VectorBuffer : public TestBuffer {
 public:
  explicit VectorBuffer(size_t bytes) : bytes_(bytes) {}
  char* data() override { return bytes_.data(); }
  void Upload(const std::vector<char>& bytes) override { bytes_ = bytes; }
  std::vector<char> Download() const override { return bytes_; }

 private:
  std::vector<char> bytes_;
};

// A buffer of the backend's kind holding `bytes`.
std::unique_ptr<TestBuffer> Holding(const ConformanceRank& r, const std::vector<char>& bytes) {
  std::unique_ptr<TestBuffer> buffer = r.allocate(bytes.size());
  buffer->Upload(bytes);
  return buffer;
}

// True if `status` is OK; otherwise reports the failed collective.
bool Succeeded(const ConformanceRank& r, const std::string& call, const Status& status) {
  if (status.ok()) return true;
  r.report->CollectiveFailed(call, status);
  return false;
}

// How far an allreduce's element i may be from its float64 reference, `expected`.
double Tolerance(const ConformanceRank& r, DataType type, ReduceOp op, const References& references, size_t i,
                 double expected) {
  if (op != ReduceOp::kAverage) return 0;
  const double unit = UnitRoundoff(type);
  if (r.average == AverageRounding::kScaleThenSum) {
    return (r.size + 2) * unit * references.magnitude[i] / r.size;
  }
  return 2 * unit * std::fabs(expected);
}

void AllreduceEveryTypeOpCountAndPlacement(const ConformanceRank& r) {
  for (DataType type : kAllTypes) {
    for (size_t count : kAllreduceCounts) {
      if (count > r.max_count) continue;
      const std::vector<char> input = Inputs(type, r.rank, count);
      const References references(type, r.size, count);
      for (ReduceOp op : kAllOps) {
        for (bool in_place : {true, false}) {
          std::unique_ptr<TestBuffer> send = Holding(r, input);
          std::unique_ptr<TestBuffer> recv = Holding(r, std::vector<char>(input.size(), 0x55));
          TestBuffer& output = in_place ? *send : *recv;
          const std::string what = "allreduce " + std::string(ReduceOpName(op)) + " " +
                                   Describe(type, count) + (in_place ? " in place" : " out of place");
          if (!Succeeded(r, what, r.backend->Allreduce(send->data(), output.data(), count, type, op))) return;
          std::vector<double> result(count);
          ConvertToDouble(type, output.Download().data(), result.data(), count);
          int wrong = 0;
          for (size_t i = 0; i < count && wrong < kMismatchesReported; ++i) {
            const double expected = references.Of(type, op, r.size, i);
            const double got = result[i];
            if (!(std::fabs(got - expected) <= Tolerance(r, type, op, references, i, expected))) {
              ++wrong;
              r.report->Check(false, what + ": element " + std::to_string(i) + " is " + std::to_string(got) +
                                         ", expected " + std::to_string(expected));
            }
          }
          if (wrong == 0) r.report->Check(true, what);
          if (!in_place) r.report->Check(send->Download() == input, what + ": its input is unchanged");
        }
      }
    }
  }
}

void IntegerAveragesTruncateTowardZero(const ConformanceRank& r) {
  // Ranks 0 and 1 bring sums of both signs that no rank count of 2 or more divides evenly.
  const std::vector<int32_t> small = r.rank == 0   ? std::vector<int32_t>{-4, 4, -1, 1}
                                     : r.rank == 1 ? std::vector<int32_t>{-3, 3, 0, 0}
                                                   : std::vector<int32_t>{0, 0, 0, 0};
  const std::vector<int32_t> small_sums = r.size == 1 ? small : std::vector<int32_t>{-7, 7, -1, 1};
  std::unique_ptr<TestBuffer> buffer = Holding(r, BytesOf(small));
  const std::string what = "allreduce average int32 of sums -7, 7, -1, 1";
  if (!Succeeded(
          r, what,
          r.backend->Allreduce(buffer->data(), buffer->data(), 4, DataType::kInt32, ReduceOp::kAverage))) {
    return;
  }
  std::vector<int32_t> expected = small_sums;
  for (int32_t& sum : expected) sum /= r.size;  // C++ division truncates toward zero
  r.report->Check(ValuesOf<int32_t>(buffer->Download()) == expected, what);

  // int64, beyond 32 bits: -(2^41 + 1) over two ranks is -2^40 - 0.5, truncated to -2^40.
  constexpr int64_t kLarge = int64_t{1} << 40;
  const std::vector<int64_t> large = {r.rank == 0 ? -kLarge - 1 : r.rank == 1 ? -kLarge : 0};
  buffer = Holding(r, BytesOf(large));
  const std::string large_what = "allreduce average int64 beyond 32 bits";
  if (!Succeeded(
          r, large_what,
          r.backend->Allreduce(buffer->data(), buffer->data(), 1, DataType::kInt64, ReduceOp::kAverage))) {
    return;
  }
  const int64_t large_sum = r.size == 1 ? -kLarge - 1 : -2 * kLarge - 1;
  r.report->Check(ValuesOf<int64_t>(buffer->Download()) == std::vector<int64_t>{large_sum / r.size},
                  large_what);
}

// Rank `rank`'s input element i for a product: 0, or plus or minus a power of two (0.5, 1 or 2; integer
// types 1 or 2, and rank 0's int64 values times 2^31 so that a 32-bit product would show), so that
// the product over up to four ranks is exact in every type, whatever order a backend multiplies in.
double ProductInput(DataType type, int rank, size_t i) {
  if (i % 11 == 5) return 0;
  const auto r = static_cast<size_t>(rank);
  const int exponent = IsInteger(type) ? static_cast<int>((i + r) % 2) : static_cast<int>((i + r) % 3) - 1;
  double value = std::ldexp((i * 3 + r) % 4 == 0 ? -1.0 : 1.0, exponent);
  if (type == DataType::kInt64 && rank == 0) value *= 0x1p31;
  return value;
}

void ProductOfEveryTypeAndPlacement(const ConformanceRank& r) {
  for (DataType type : kAllTypes) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1025}}) {
      if (count > r.max_count) continue;
      std::vector<double> mine(count);
      std::vector<double> expected(count, 1.0);
      for (size_t i = 0; i < count; ++i) {
        mine[i] = ProductInput(type, r.rank, i);
        for (int rank = 0; rank < r.size; ++rank) expected[i] *= ProductInput(type, rank, i);
      }
      std::vector<char> input(count * DataTypeSize(type));
      ConvertFromDouble(type, mine.data(), input.data(), count);
      for (bool in_place : {true, false}) {
        std::unique_ptr<TestBuffer> send = Holding(r, input);
        std::unique_ptr<TestBuffer> recv = Holding(r, std::vector<char>(input.size(), 0x55));
        TestBuffer& output = in_place ? *send : *recv;
        const std::string what = "allreduce product " + Describe(type, count) + (in_place ? " in place" : "");
        if (!Succeeded(r, what,
                       r.backend->Allreduce(send->data(), output.data(), count, type, ReduceOp::kProduct))) {
          return;
        }
        std::vector<double> result(count);
        ConvertToDouble(type, output.Download().data(), result.data(), count);
        size_t wrong = 0;
        while (wrong < count && result[wrong] == expected[wrong]) ++wrong;
        r.report->Check(wrong == count, wrong == count ? what
                                                       : what + ": element " + std::to_string(wrong) +
                                                             " is " + std::to_string(result[wrong]) +
                                                             ", expected " + std::to_string(expected[wrong]));
      }
    }
  }
}

void Float32SumsWithinTheRoundingBound(const ConformanceRank& r) {
  // The result may differ from the float64 reference by the rounding of (size - 1) additions, each
  // at most 2^-24 of the running sum of magnitudes.
  constexpr size_t kCount = 4099;
  auto value = [](int rank, size_t i) {
    return static_cast<float>(std::sin(static_cast<double>(i) * 0.37 + rank) * 1000.0);
  };
  std::vector<float> data(kCount);
  for (size_t i = 0; i < kCount; ++i) data[i] = value(r.rank, i);
  std::unique_ptr<TestBuffer> buffer = Holding(r, BytesOf(data));
  const std::string what = "allreduce sum float32 of values that are not exactly representable";
  if (!Succeeded(
          r, what,
          r.backend->Allreduce(buffer->data(), buffer->data(), kCount, DataType::kFloat32, ReduceOp::kSum))) {
    return;
  }
  data = ValuesOf<float>(buffer->Download());
  for (size_t i = 0; i < kCount; ++i) {
    double sum = 0;
    double magnitude = 0;
    for (int rank = 0; rank < r.size; ++rank) {
      sum += value(rank, i);
      magnitude += std::fabs(value(rank, i));
    }
    if (std::fabs(data[i] - sum) > (r.size - 1) * 0x1p-24 * magnitude + 1e-30) {
      r.report->Check(false, what + ": element " + std::to_string(i) + " is " + std::to_string(data[i]) +
                                 ", expected " + std::to_string(sum));
      return;
    }
  }
  r.report->Check(true, what);
}

void BroadcastFromEveryRoot(const ConformanceRank& r) {
  for (int root = 0; root < r.size; ++root) {
    for (DataType type : kAllTypes) {
      for (size_t count : kBroadcastCounts) {
        if (count > r.max_count) continue;
        // Every rank starts with its own values; the root's must replace them.
        std::unique_ptr<TestBuffer> buffer = Holding(r, Inputs(type, r.rank, count));
        const std::string what = "broadcast " + Describe(type, count) + " from root " + std::to_string(root);
        if (!Succeeded(r, what, r.backend->Broadcast(buffer->data(), count, type, root))) return;
        r.report->Check(buffer->Download() == Inputs(type, root, count), what);
      }
    }
  }
}

void AllgatherFromEveryPlacement(const ConformanceRank& r) {
  const auto size = static_cast<size_t>(r.size);
  const auto rank = static_cast<size_t>(r.rank);
  for (DataType type : kAllTypes) {
    for (size_t count : kAllgatherCounts) {
      if (count > r.max_count) continue;
      const size_t bytes = count * DataTypeSize(type);
      std::vector<char> expected;
      for (int block = 0; block < r.size; ++block) {
        const std::vector<char> input = Inputs(type, block, count);
        expected.insert(expected.end(), input.begin(), input.end());
      }
      const std::vector<char> mine = Inputs(type, r.rank, count);
      // Where this rank's input lies: a buffer apart, its own block of recv, or recv's start.
      const struct {
        const char* name;
        bool inside_recv;
        size_t offset;
      } placements[] = {{"from a buffer apart", false, 0},
                        {"in place", true, rank * bytes},
                        {"from the start of the receive buffer", true, 0}};
      for (const auto& placement : placements) {
        std::vector<char> recv_bytes(bytes * size, 0x55);
        if (placement.inside_recv) std::copy(mine.begin(), mine.end(), recv_bytes.begin() + placement.offset);
        std::unique_ptr<TestBuffer> recv = Holding(r, recv_bytes);
        std::unique_ptr<TestBuffer> apart = Holding(r, placement.inside_recv ? std::vector<char>() : mine);
        char* send = placement.inside_recv ? recv->data() + placement.offset : apart->data();
        const std::string what = "allgather " + Describe(type, count) + " " + placement.name;
        if (!Succeeded(r, what, r.backend->Allgather(send, recv->data(), count, type))) return;
        r.report->Check(recv->Download() == expected, what);
      }
    }
  }
}

// Rank r's block j is input number r * size + j: every block that crosses is told apart.
void AlltoallEveryTypeAndCount(const ConformanceRank& r) {
  for (DataType type : kAllTypes) {
    for (size_t count : kAllgatherCounts) {
      if (count > r.max_count) continue;
      std::vector<char> mine;
      std::vector<char> expected;
      for (int block = 0; block < r.size; ++block) {
        const std::vector<char> to_block = Inputs(type, r.rank * r.size + block, count);
        mine.insert(mine.end(), to_block.begin(), to_block.end());
        const std::vector<char> from_block = Inputs(type, block * r.size + r.rank, count);
        expected.insert(expected.end(), from_block.begin(), from_block.end());
      }
      std::unique_ptr<TestBuffer> send = Holding(r, mine);
      std::unique_ptr<TestBuffer> recv = Holding(r, std::vector<char>(mine.size(), 0x55));
      const std::string what = "alltoall " + Describe(type, count);
      if (!Succeeded(r, what, r.backend->Alltoall(send->data(), recv->data(), count, type))) return;
      r.report->Check(recv->Download() == expected, what);
      r.report->Check(send->Download() == mine, what + ": the send buffer unchanged");
    }
  }
}

// Rank k sends (k + 2 j + shift) % 4 * unit elements to rank j (none included), for units of 1, 7 and
// 12,501 elements.
void AlltoallvUnevenCounts(const ConformanceRank& r) {
  const auto ranks = static_cast<size_t>(r.size);
  for (DataType type : kAllTypes) {
    for (size_t unit : {size_t{1}, size_t{7}, size_t{12'501}}) {
      if (3 * unit > r.max_count) continue;
      for (size_t shift = 0; shift < 2; ++shift) {
        auto elements = [&](size_t from, size_t to) { return (from + 2 * to + shift) % 4 * unit; };
        std::vector<size_t> send_counts(ranks);
        std::vector<size_t> recv_counts(ranks);
        std::vector<char> mine;
        std::vector<char> expected;
        const auto me = static_cast<size_t>(r.rank);
        for (size_t peer = 0; peer < ranks; ++peer) {
          send_counts[peer] = elements(me, peer);
          recv_counts[peer] = elements(peer, me);
          const std::vector<char> to_peer =
              Inputs(type, static_cast<int>(me * ranks + peer), send_counts[peer]);
          mine.insert(mine.end(), to_peer.begin(), to_peer.end());
          const std::vector<char> from_peer =
              Inputs(type, static_cast<int>(peer * ranks + me), recv_counts[peer]);
          expected.insert(expected.end(), from_peer.begin(), from_peer.end());
        }
        std::unique_ptr<TestBuffer> send = Holding(r, mine);
        std::unique_ptr<TestBuffer> recv = Holding(r, std::vector<char>(expected.size(), 0x55));
        const std::string what =
            "alltoallv " + Describe(type, unit) + " units, shift " + std::to_string(shift);
        if (!Succeeded(r, what,
                       r.backend->Alltoallv(send->data(), send_counts, recv->data(), recv_counts, type))) {
          return;
        }
        r.report->Check(recv->Download() == expected, what);
        r.report->Check(send->Download() == mine, what + ": the send buffer unchanged");
      }
    }
  }
}

// The last rank creates a file only after a pause, then enters the barrier; every rank must see the
// file once its barrier returns. Files, not memory, so that ranks that are processes can see them
// too; the directory is rank 0's, named to the others by broadcast.
void BarrierWaitsForEveryRank(const ConformanceRank& r) {
  constexpr size_t kPathBytes = 256;
  std::vector<char> path_bytes(kPathBytes, '\0');
  if (r.rank == 0) {
    std::string pattern = (std::filesystem::temp_directory_path() / "hvdrun-barrier-XXXXXX").string();
    const bool made = pattern.size() < kPathBytes && ::mkdtemp(pattern.data()) != nullptr;
    r.report->Check(made, made ? "a directory for the barrier's files"
                               : "cannot create a directory from " + pattern + ": " + std::strerror(errno));
    // Without one, the empty name tells every rank to stop here.
    if (made) std::copy(pattern.begin(), pattern.end(), path_bytes.begin());
  }
  std::unique_ptr<TestBuffer> path_buffer = Holding(r, path_bytes);
  if (!Succeeded(r, "broadcast of the barrier's directory",
                 r.backend->Broadcast(path_buffer->data(), kPathBytes / 4, DataType::kInt32, 0))) {
    return;
  }
  const std::filesystem::path dir(path_buffer->Download().data());
  if (dir.empty()) return;
  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    const std::filesystem::path marker = dir / ("round-" + std::to_string(round));
    if (r.rank == r.size - 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::FILE* file = std::fopen(marker.c_str(), "w");
      r.report->Check(file != nullptr, "creating " + marker.string());
      if (file != nullptr) std::fclose(file);
    }
    if (!Succeeded(r, "barrier", r.backend->Barrier())) return;
    r.report->Check(std::filesystem::exists(marker), "barrier round " + std::to_string(round) +
                                                         " returned after rank " +
                                                         std::to_string(r.size - 1) + " entered it");
    // A second barrier keeps the next round's file out of this round's check.
    if (!Succeeded(r, "barrier", r.backend->Barrier())) return;
  }
  if (r.rank == 0) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
}

void BaselineIsTheLibrarysSum(const ConformanceRank& r) {
  const float triangle = static_cast<float>(r.size) * static_cast<float>(r.size + 1) / 2;
  std::unique_ptr<TestBuffer> floats =
      Holding(r, BytesOf(std::vector<float>(1001, static_cast<float>(r.rank + 1))));
  if (!Succeeded(r, "baseline float32",
                 r.backend->BaselineAllreduce(floats->data(), 1001, DataType::kFloat32, ReduceOp::kSum))) {
    return;
  }
  r.report->Check(ValuesOf<float>(floats->Download()) == std::vector<float>(1001, triangle),
                  "baseline float32 sum");
  const double half_triangle = 0.25 * r.size * (r.size - 1);
  std::unique_ptr<TestBuffer> doubles = Holding(r, BytesOf(std::vector<double>(17, 0.5 * r.rank)));
  if (!Succeeded(r, "baseline float64",
                 r.backend->BaselineAllreduce(doubles->data(), 17, DataType::kFloat64, ReduceOp::kSum))) {
    return;
  }
  r.report->Check(ValuesOf<double>(doubles->Download()) == std::vector<double>(17, half_triangle),
                  "baseline float64 sum");

  // Refused on every rank before anything is sent, so no rank waits for another.
  const std::string refusal = std::string(BackendName(r.kind)) +
                              ": the baseline allreduce supports float32 and float64 with sum, not ";
  std::unique_ptr<TestBuffer> halves = r.allocate(DataTypeSize(DataType::kFloat16) * 5);
  Status status = r.backend->BaselineAllreduce(halves->data(), 5, DataType::kFloat16, ReduceOp::kSum);
  r.report->Check(status.message() == refusal + "float16 with sum",
                  "baseline float16 is refused: " + status.message());
  status = r.backend->BaselineAllreduce(floats->data(), 5, DataType::kFloat32, ReduceOp::kAverage);
  r.report->Check(status.message() == refusal + "float32 with average",
                  "baseline average is refused: " + status.message());

  // The backend's own collectives still work after the baseline's calls.
  if (!Succeeded(
          r, "allreduce after the baseline",
          r.backend->Allreduce(doubles->data(), doubles->data(), 17, DataType::kFloat64, ReduceOp::kMax))) {
    return;
  }
  r.report->Check(ValuesOf<double>(doubles->Download()) == std::vector<double>(17, half_triangle),
                  "allreduce max after the baseline");
}

}  // namespace

std::unique_ptr<TestBuffer> HostBuffer(size_t bytes) { return std::make_unique<VectorBuffer>(bytes); }

const std::vector<ConformanceCase>& ConformanceCases() {
  static const std::vector<ConformanceCase> kCases = {
      {"AllreduceEveryTypeOpCountAndPlacement", &AllreduceEveryTypeOpCountAndPlacement},
      {"IntegerAveragesTruncateTowardZero", &IntegerAveragesTruncateTowardZero},
      {"ProductOfEveryTypeAndPlacement", &ProductOfEveryTypeAndPlacement},
      {"Float32SumsWithinTheRoundingBound", &Float32SumsWithinTheRoundingBound},
      {"BroadcastFromEveryRoot", &BroadcastFromEveryRoot},
      {"AllgatherFromEveryPlacement", &AllgatherFromEveryPlacement},
      {"AlltoallEveryTypeAndCount", &AlltoallEveryTypeAndCount},
      {"AlltoallvUnevenCounts", &AlltoallvUnevenCounts},
      {"BarrierWaitsForEveryRank", &BarrierWaitsForEveryRank},
      {"BaselineIsTheLibrarysSum", &BaselineIsTheLibrarysSum},
  };
  return kCases;
}

void RunConformanceCases(const ConformanceRank& rank) {
  for (const ConformanceCase& conformance_case : ConformanceCases()) conformance_case.run(rank);
}

}  // namespace hvdrun::testing
