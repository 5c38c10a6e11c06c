#include "lab/run/slurm_job.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>

#include "common/env_names.h"
#include "common/error_text.h"
#include "common/shell_words.h"
#include "lab/experiment/experiment_limits.h"

namespace hvdrun::lab {
namespace {

bool AllDigits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Splits `text` at `separator`.
std::vector<std::string> Fields(const std::string& text, char separator) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    fields.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return fields;
    start = end + 1;
  }
}

}  // namespace

StatusOr<std::optional<SlurmAllocation>> ChooseSlurmAllocation(
    const ExperimentConfig& config, bool slurm_flag, const std::function<const char*(const char*)>& getenv) {
  const char* job = getenv(env::kSlurmJobId);
  const bool in_allocation = job != nullptr && *job != '\0';
  if (!slurm_flag && (!in_allocation || !config.hosts.empty())) return std::optional<SlurmAllocation>();
  if (!in_allocation) {
    return Status::Error(std::string("--slurm: not inside a Slurm allocation (") + env::kSlurmJobId +
                         " is not set); submit the experiment with sbatch (hvdrun-lab sbatch " + config.path +
                         " > job.sh; sbatch job.sh) or run it under salloc");
  }
  StatusOr<std::optional<SlurmAllocation>> allocation = ReadSlurmAllocation(getenv);
  if (!allocation.ok()) return allocation.status();
  return allocation;
}

SlurmAllocation AllocationForSubmission(const ExperimentConfig& config) {
  int nodes = 1;
  int tasks = 1;
  for (const Axis& axis : config.axes) {
    for (const AxisValue& value : axis.values) {
      if (axis.kind == AxisKind::kServers) nodes = std::max(nodes, value.number);
      if (axis.kind == AxisKind::kNumProc || axis.kind == AxisKind::kProcsPerServer) {
        tasks = std::max(tasks, value.number);
      }
    }
  }
  SlurmAllocation allocation;
  allocation.job_id = "to be submitted";
  for (int i = 1; i <= nodes; ++i) allocation.nodes.push_back(HostSlots{"node" + std::to_string(i), tasks});
  allocation.num_tasks = static_cast<int>(std::min<int64_t>(int64_t{nodes} * tasks, kMaxProcesses));
  return allocation;
}

Status CheckSlurmTimeLimit(const std::string& text) {
  const std::string error = "--time '" + text +
                            "': not a Slurm time limit (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or "
                            "D-HH:MM:SS)";
  std::string clock = text;
  const size_t dash = text.find('-');
  if (dash != std::string::npos) {
    if (!AllDigits(text.substr(0, dash))) return Status::Error(error);
    clock = text.substr(dash + 1);
  }
  const std::vector<std::string> fields = Fields(clock, ':');
  if (fields.size() > 3 || !std::all_of(fields.begin(), fields.end(), AllDigits)) return Status::Error(error);
  return Status::Ok();
}

std::string SbatchDirectiveQuote(std::string_view value) {
  const bool plain = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("_-+=/.,:@%").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(value);
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

StatusOr<std::string> BuildSbatchScript(const ExperimentConfig& config, const Matrix& matrix,
                                        const SbatchOptions& options) {
  // Each #SBATCH line is one line of the script: a value that would break it is refused.
  for (const auto& [flag, value] : {std::pair<const char*, const std::string&>{"--output", options.output},
                                    {"--partition", options.partition},
                                    {"--time", options.time_limit}}) {
    if (std::any_of(value.begin(), value.end(),
                    [](char c) { return std::iscntrl(static_cast<unsigned char>(c)) != 0; })) {
      return Status::Error(
          std::string(flag) + " '" + OneLineText(value) +
          "': holds a control character (a line break, a tab ...), which an #SBATCH line cannot hold");
    }
  }
  int nodes = 1;
  int tasks_per_node = 1;
  for (const Cell& cell : matrix.cells) {
    nodes = std::max(nodes, cell.servers);
    tasks_per_node = std::max(tasks_per_node, cell.procs_per_server);
  }
  std::vector<std::string> run = {options.lab_path, "run",       options.experiment_path,
                                  "--slurm",        "--results", options.results};
  if (options.force) run.emplace_back("--force");
  const std::string output = options.output.empty() ? config.name + "-%j.out" : options.output;
  std::string script = "#!/bin/sh\n";
  script += "#SBATCH --job-name=" + SbatchDirectiveQuote(config.name) + "\n";
  script += "#SBATCH --nodes=" + std::to_string(nodes) + "\n";
  script += "#SBATCH --ntasks-per-node=" + std::to_string(tasks_per_node) + "\n";
  if (!options.time_limit.empty()) {
    script += "#SBATCH --time=" + SbatchDirectiveQuote(options.time_limit) + "\n";
  }
  script += "#SBATCH --output=" + SbatchDirectiveQuote(output) + "\n";
  if (!options.partition.empty()) {
    script += "#SBATCH --partition=" + SbatchDirectiveQuote(options.partition) + "\n";
  }
  // A comment: the path as a reader sees it, on its one line (the command below has it exactly).
  script += "# Written by hvdrun-lab sbatch from " + OneLineText(config.path) + ": " +
            std::to_string(matrix.cells.size()) + (matrix.cells.size() == 1 ? " cell" : " cells") +
            ", the largest on " + std::to_string(nodes) + (nodes == 1 ? " node" : " nodes") + " with " +
            std::to_string(tasks_per_node) + (tasks_per_node == 1 ? " process" : " processes") +
            " per node. Each cell runs on the first nodes of the allocation it needs.\n";
  script += "exec " + ShellJoin(run) + "\n";
  return script;
}

}  // namespace hvdrun::lab
