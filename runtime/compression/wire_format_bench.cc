// hvdrun_wire_format_bench: how fast one core converts float32 gradients to each wire format and
// back (runtime/compression/wire_format.h), beside memcpy of the same float32 bytes in the same run.
//
//   hvdrun_wire_format_bench [--mib N] [--rounds R]
//
// Each figure is the median of R rounds over N MiB of float32 values drawn like gradients
// (normal, sigma 1e-3), in GB/s of float32 bytes (1e9), so that the encode and decode columns
// compare with memcpy directly. Built with the tests; not installed.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/compression/wire_format.h"

namespace hvdrun {
namespace {

template <typename Body>
double MedianSeconds(int rounds, Body&& body) {
  std::vector<double> seconds;
  for (int round = 0; round < rounds; ++round) {
    const auto start = std::chrono::steady_clock::now();
    body();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

int Run(size_t mib, int rounds) {
  const size_t count = mib * (size_t{1} << 20) / sizeof(float);
  const double bytes = static_cast<double>(count * sizeof(float));
  std::vector<float> gradients(count);
  std::vector<float> copy(count);
  std::vector<float> decoded(count, 0.0f);
  std::vector<uint8_t> wire(count * 2);
  std::mt19937 random(1);
  std::normal_distribution<float> gradient(0.0f, 1e-3f);
  for (float& value : gradients) value = gradient(random);

  const double memcpy_s =
      MedianSeconds(rounds, [&] { std::memcpy(copy.data(), gradients.data(), count * 4); });
  const double amax_s = MedianSeconds(rounds, [&] { copy[0] = AbsoluteMax(gradients.data(), count); });
  std::printf("# %zu MiB of float32, median of %d rounds, one core; GB/s of float32 bytes\n", mib, rounds);
  std::printf("%-10s %10s %10s %12s %16s\n", "format", "encode", "decode", "decode+add", "encode/memcpy");
  std::printf("%-10s %10.2f %10s %12s %16s\n", "memcpy", bytes / memcpy_s / 1e9, "", "", "1.00");
  std::printf("%-10s %10.2f %10s %12s %16.2f\n", "absmax", bytes / amax_s / 1e9, "", "", memcpy_s / amax_s);
  for (WireFormat format :
       {WireFormat::kFloat16, WireFormat::kBFloat16, WireFormat::kFloat8E4M3, WireFormat::kFloat8E5M2}) {
    const float scale = WireScaleFor(format, AbsoluteMax(gradients.data(), count), 1.0f);
    const double encode_s =
        MedianSeconds(rounds, [&] { EncodeToWire(format, gradients.data(), count, scale, wire.data()); });
    const double decode_s = MedianSeconds(
        rounds, [&] { DecodeFromWire(format, wire.data(), count, 1.0f / scale, decoded.data()); });
    const double add_s = MedianSeconds(
        rounds, [&] { DecodeAddFromWire(format, wire.data(), count, 1.0f / scale, decoded.data()); });
    std::printf("%-10s %10.2f %10.2f %12.2f %16.2f\n", std::string(WireFormatName(format)).c_str(),
                bytes / encode_s / 1e9, bytes / decode_s / 1e9, bytes / add_s / 1e9, memcpy_s / encode_s);
  }
  return 0;
}

}  // namespace
}  // namespace hvdrun

int main(int argc, char** argv) {
  size_t mib = 64;
  int rounds = 9;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if ((flag == "--mib" || flag == "--rounds") && i + 1 < argc) {
      const int64_t value = std::strtoll(argv[++i], nullptr, 10);
      if (value <= 0) {
        std::fprintf(stderr, "hvdrun_wire_format_bench: %s wants a positive number, not %s\n", flag.c_str(),
                     argv[i]);
        return 2;
      }
      if (flag == "--mib") {
        mib = static_cast<size_t>(value);
      } else {
        rounds = static_cast<int>(value);
      }
      continue;
    }
    std::fprintf(stderr, "usage: hvdrun_wire_format_bench [--mib N] [--rounds R]\n");
    return 2;
  }
  return hvdrun::Run(mib, rounds);
}
