#include "runtime/negotiation/response_statistics.h"

namespace hvdrun {
namespace {

constexpr uint64_t kKilobyte = 1000;
constexpr uint64_t kMegabyte = 1000 * kKilobyte;
constexpr uint64_t kStep = 10 * kMegabyte;

// The bin holding `bytes`: its (lower, upper] bounds.
std::pair<uint64_t, uint64_t> BinOf(uint64_t bytes) {
  if (bytes <= kKilobyte) return {0, kKilobyte};
  if (bytes <= kMegabyte) return {kKilobyte, kMegabyte};
  const uint64_t steps = (bytes + kStep - 1) / kStep;  // (10 MB, 20 MB] is step 2
  if (steps == 1) return {kMegabyte, kStep};
  return {(steps - 1) * kStep, steps * kStep};
}

double Seconds(std::chrono::nanoseconds time) { return std::chrono::duration<double>(time).count(); }

}  // namespace

void ResponseStatistics::Record(uint64_t bytes, uint64_t tensors, std::chrono::nanoseconds time) {
  const auto [lower, upper] = BinOf(bytes);
  Bin& bin = bins_[upper];
  bin.lower_bytes = lower;
  bin.upper_bytes = upper;
  ++bin.responses;
  bin.tensors += tensors;
  bin.bytes += bytes;
  bin.time += time;
}

std::vector<ResponseStatistics::Bin> ResponseStatistics::Bins() const {
  std::vector<Bin> bins;
  bins.reserve(bins_.size());
  for (const auto& [upper, bin] : bins_) bins.push_back(bin);
  return bins;
}

uint64_t ResponseStatistics::responses() const {
  uint64_t n = 0;
  for (const auto& [upper, bin] : bins_) n += bin.responses;
  return n;
}

uint64_t ResponseStatistics::bytes() const {
  uint64_t n = 0;
  for (const auto& [upper, bin] : bins_) n += bin.bytes;
  return n;
}

nlohmann::json ResponseStatistics::ToJson() const {
  nlohmann::json bins = nlohmann::json::array();
  Bin total;
  for (const auto& [upper, bin] : bins_) {
    bins.push_back({{"lower_bytes", bin.lower_bytes},
                    {"upper_bytes", bin.upper_bytes},
                    {"responses", bin.responses},
                    {"tensors", bin.tensors},
                    {"bytes", bin.bytes},
                    {"seconds", Seconds(bin.time)}});
    total.responses += bin.responses;
    total.tensors += bin.tensors;
    total.bytes += bin.bytes;
    total.time += bin.time;
  }
  return {{"bins", bins},
          {"responses", total.responses},
          {"tensors", total.tensors},
          {"bytes", total.bytes},
          {"seconds", Seconds(total.time)}};
}

}  // namespace hvdrun
