// libFuzzer target for the reader of Slurm's variables (common/placement/slurm_allocation.h). The
// input is SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE and SLURM_NTASKS separated by NUL bytes (a
// missing one is unset). Checked beyond "no crash, no sanitizer report, no hang": an error is one
// line that starts with "inside Slurm job "; an accepted allocation has one slot count (1 to
// kMaxSlots) per node, distinct valid node names, at most kMaxSlots tasks in all, and a task count
// from 1 to kMaxSlots. Build and run: tests/fuzz/CMakeLists.txt.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/placement/slurm_allocation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::map<std::string, std::string> variables = {{"SLURM_JOB_ID", "7"}};
  for (const char* name : {"SLURM_JOB_NODELIST", "SLURM_TASKS_PER_NODE", "SLURM_NTASKS"}) {
    if (input.data() == nullptr) break;
    const size_t end = input.find('\0');
    variables[name] = std::string(input.substr(0, end));
    input = end == std::string_view::npos ? std::string_view() : input.substr(end + 1);
  }
  auto getenv = [&](const char* name) -> const char* {
    auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  };
  hvdrun::StatusOr<std::optional<hvdrun::SlurmAllocation>> read = hvdrun::ReadSlurmAllocation(getenv);
  if (!read.ok()) {
    if (read.status().message().rfind("inside Slurm job 7: ", 0) != 0) std::abort();
    return 0;
  }
  if (!read.value().has_value()) std::abort();
  const hvdrun::SlurmAllocation& allocation = *read.value();
  std::set<std::string> names;
  int64_t total = 0;
  for (const hvdrun::HostSlots& node : allocation.nodes) {
    if (node.slots < 1 || node.slots > hvdrun::kMaxSlots || !hvdrun::CheckHostName(node.host).empty() ||
        !names.insert(node.host).second) {
      std::abort();
    }
    total += node.slots;
  }
  if (allocation.nodes.empty() || total > hvdrun::kMaxSlots || allocation.num_tasks < 1 ||
      allocation.num_tasks > hvdrun::kMaxSlots) {
    std::abort();
  }
  return 0;
}
