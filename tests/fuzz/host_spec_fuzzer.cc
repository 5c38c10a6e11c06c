// libFuzzer target for -H's parser (common/placement/host_spec.h), which reads what a user types.
// Checked beyond "no crash, no sanitizer report, no hang": an error is one line that starts with
// "-H: "; an accepted list holds hosts with valid names and 1 to kMaxSlots slots, kMaxSlots at most
// in all, each written back by FormatHostSlots into a spec that parses to the same entry. Build and
// run: tests/fuzz/CMakeLists.txt.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "common/placement/host_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using hvdrun::HostSlots;
  const std::string_view spec(reinterpret_cast<const char*>(data), size);
  hvdrun::StatusOr<std::vector<HostSlots>> hosts = hvdrun::ParseHostList(spec);
  if (!hosts.ok()) {
    const std::string& message = hosts.status().message();
    if (message.rfind("-H: ", 0) != 0 ||
        (spec.find('\n') == std::string_view::npos && message.find('\n') != std::string::npos)) {
      std::abort();
    }
    return 0;
  }
  int64_t total = 0;
  for (const HostSlots& host : hosts.value()) {
    if (host.slots < 1 || host.slots > hvdrun::kMaxSlots || !hvdrun::CheckHostName(host.host).empty()) {
      std::abort();
    }
    total += host.slots;
    hvdrun::StatusOr<std::vector<HostSlots>> again = hvdrun::ParseHostList(hvdrun::FormatHostSlots(host));
    if (!again.ok() || again.value() != std::vector<HostSlots>{host}) std::abort();
  }
  if (hosts.value().empty() || total > hvdrun::kMaxSlots || hvdrun::TotalSlots(hosts.value()) != total) {
    std::abort();
  }
  return 0;
}
