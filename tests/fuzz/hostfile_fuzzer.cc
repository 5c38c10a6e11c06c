// libFuzzer target for the hostfile parser (common/placement/hostfile.h), which reads a file a user
// hands over. Checked beyond "no crash, no sanitizer report, no hang": an error names the file (or
// --hostfile) first; an accepted file holds hosts with valid names and 1 to kMaxSlots slots,
// kMaxSlots at most in all. Build and run: tests/fuzz/CMakeLists.txt.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "common/placement/hostfile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using hvdrun::HostSlots;
  const std::string_view contents(reinterpret_cast<const char*>(data), size);
  hvdrun::StatusOr<std::vector<HostSlots>> hosts = hvdrun::ParseHostfile(contents, "hosts.txt");
  if (!hosts.ok()) {
    const std::string& message = hosts.status().message();
    if (message.rfind("hosts.txt:", 0) != 0 && message.rfind("--hostfile: hosts.txt ", 0) != 0) std::abort();
    return 0;
  }
  int64_t total = 0;
  for (const HostSlots& host : hosts.value()) {
    if (host.slots < 1 || host.slots > hvdrun::kMaxSlots || !hvdrun::CheckHostName(host.host).empty()) {
      std::abort();
    }
    total += host.slots;
  }
  if (hosts.value().empty() || total > hvdrun::kMaxSlots) std::abort();
  return 0;
}
