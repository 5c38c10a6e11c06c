#include "lab/experiment/matrix.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>

#include "common/env_names.h"
#include "common/error_text.h"
#include "lab/experiment/experiment_limits.h"
#include "lab/number_text.h"

namespace hvdrun::lab {
namespace {

// Longest directory name a cell gets before its id is shortened and given a hash.
constexpr size_t kMaxIdLength = 160;

// A number as hvdrun's flags take it: "64", "2.5".
std::string FormatSettingNumber(double value) { return NumberText("%g", value); }

}  // namespace

std::string SlugForFileName(std::string_view text) {
  std::string out;
  for (char c : text) {
    bool keep = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '+';
    out += keep ? c : '-';
  }
  size_t start = out.find_first_not_of('-');
  return start == std::string::npos ? "x" : out.substr(start);
}

namespace {

std::string HashHex(std::string_view text) {
  uint32_t hash = 2166136261u;  // FNV-1a
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619u;
  }
  char hex[9];
  std::snprintf(hex, sizeof(hex), "%08x", hash);
  return hex;
}

bool Excluded(const ExcludeRule& rule, const Cell& cell) {
  return std::all_of(rule.conditions.begin(), rule.conditions.end(), [&](const auto& condition) {
    const std::string value = CellValue(cell, condition.first);
    return std::find(condition.second.begin(), condition.second.end(), value) != condition.second.end();
  });
}

// The values that decide a cell's placement, as BuildCell's steps pass them on.
struct PlacementValues {
  const AxisValue* count = nullptr;    // np's or processes_per_server's
  const AxisValue* servers = nullptr;  // servers'
  const AxisValue* gpu = nullptr;      // what makes the cell need GPUs: backend nccl, device cuda
  int per_server = 0;                  // processes_per_server, when that is the axis
};

// Applies each axis's value `picked` holds to `cell`: its backend, counts, program arguments,
// environment and hvdrun flags.
PlacementValues ApplyAxisValues(const ExperimentConfig& config, const std::vector<const AxisValue*>& picked,
                                Cell& cell) {
  PlacementValues picks;
  cell.program_args = config.args;
  cell.hvdrun_args = HvdrunOptionArguments(config);
  for (const auto& [name, value] : config.env) cell.env.push_back(name + "=" + value);
  for (size_t i = 0; i < config.axes.size(); ++i) {
    const Axis& axis = config.axes[i];
    const AxisValue& value = *picked[i];
    cell.values.emplace_back(axis.name, value.text);
    switch (axis.kind) {
      case AxisKind::kBackend:
        cell.backend = value.text;
        if (value.text == "nccl") picks.gpu = &value;
        break;
      case AxisKind::kNumProc:
        cell.num_proc = value.number;
        picks.count = &value;
        break;
      case AxisKind::kProcsPerServer:
        picks.per_server = value.number;
        picks.count = &value;
        break;
      case AxisKind::kServers:
        cell.servers = value.number;
        picks.servers = &value;
        break;
      case AxisKind::kProgramFlag:
        if (!value.is_boolean) {
          cell.program_args.push_back(axis.target);
          cell.program_args.push_back(value.text);
        } else if (value.text[0] == 't' || value.text[0] == 'T') {
          cell.program_args.push_back(axis.target);
        }
        if (axis.name == "device" && value.text.rfind("cuda", 0) == 0 && picks.gpu == nullptr) {
          picks.gpu = &value;
        }
        break;
      case AxisKind::kEnvironment:
        cell.env.push_back(axis.target + "=" + value.text);
        break;
      case AxisKind::kCompression: {
        const std::vector<std::string> words =
            CompressionSettingArguments(value.text).value_or(std::vector<std::string>{});
        cell.hvdrun_args.insert(cell.hvdrun_args.end(), words.begin(), words.end());
        break;
      }
      case AxisKind::kFusion:
        if (value.fusion.autotune) {
          cell.hvdrun_args.insert(cell.hvdrun_args.end(),
                                  {"--autotune", "--autotune-log-file", kAutotuneLogFile});
          break;
        }
        cell.hvdrun_args.insert(cell.hvdrun_args.end(),
                                {"--fusion-threshold-mb", FormatSettingNumber(value.fusion.threshold_mb),
                                 "--cycle-time-ms", FormatSettingNumber(value.fusion.cycle_ms)});
        break;
    }
  }
  return picks;
}

// Places the cell's processes on the experiment's hosts (or the Slurm allocation's nodes, or
// localhost), failing for a cell that does not fit.
Status PlaceCell(const ExperimentConfig& config, const MachineFacts& machine, const PlacementValues& picks,
                 Cell& cell) {
  const std::string where = " (cell " + DescribeCell(cell) + ")";
  const SlurmAllocation* slurm = machine.slurm ? &*machine.slurm : nullptr;
  const std::vector<HostSlots>& host_list = slurm != nullptr ? slurm->nodes : config.hosts;
  const int hosts = static_cast<int>(host_list.size());
  if (hosts == 0 && cell.servers > 1) {
    return Status::Error(picks.servers->position.Prefix() + "servers " + std::to_string(cell.servers) +
                         " needs that many hosts, and the experiment names none; add hosts or hostfile" +
                         where);
  }
  if (hosts > 0 && cell.servers > hosts) {
    if (slurm != nullptr) {
      return Status::Error(picks.servers->position.Prefix() + "servers " + std::to_string(cell.servers) +
                           " needs " + std::to_string(cell.servers) + " nodes, and Slurm job " +
                           slurm->job_id + " has " + std::to_string(hosts) + " (" + env::kSlurmJobNodeList +
                           "='" + slurm->node_list + "'); submit with -N " + std::to_string(cell.servers) +
                           " (hvdrun-lab sbatch), or exclude the cell" + where);
    }
    return Status::Error(picks.servers->position.Prefix() + "servers " + std::to_string(cell.servers) +
                         " is more than the " + std::to_string(hosts) + " hosts of the experiment" + where);
  }
  if (cell.num_proc % cell.servers != 0) {
    return Status::Error(picks.count->position.Prefix() + "np " + std::to_string(cell.num_proc) +
                         " does not split evenly over " + std::to_string(cell.servers) +
                         " servers; use a multiple, or exclude the cell" + where);
  }
  cell.procs_per_server = cell.num_proc / cell.servers;
  if (hosts == 0) {
    cell.hosts.push_back(HostSlots{"localhost", cell.num_proc});
  }
  for (int h = 0; h < std::min(hosts, cell.servers); ++h) {
    const HostSlots& host = host_list[h];
    if (cell.procs_per_server > host.slots && slurm != nullptr) {
      return Status::Error(picks.count->position.Prefix() + std::to_string(cell.procs_per_server) +
                           " processes per server need as many tasks on node '" + host.host +
                           "' of Slurm job " + slurm->job_id + ", which has " + std::to_string(host.slots) +
                           " (" + env::kSlurmTasksPerNode + "='" + slurm->tasks_per_node +
                           "'); submit with --ntasks-per-node=" + std::to_string(cell.procs_per_server) +
                           " (hvdrun-lab sbatch), or exclude the cell" + where);
    }
    if (cell.procs_per_server > host.slots) {
      return Status::Error(picks.count->position.Prefix() + std::to_string(cell.procs_per_server) +
                           " processes per server need as many slots on host '" + host.host +
                           "', which has " + std::to_string(host.slots) +
                           "; lower the count, add slots, or exclude the cell" + where);
    }
    cell.hosts.push_back(HostSlots{host.host, cell.procs_per_server});
  }
  return Status::Ok();
}

// Fills in everything but the id; `picked` holds one value per axis of `config`.
Status BuildCell(const ExperimentConfig& config, const MachineFacts& machine,
                 const std::vector<const AxisValue*>& picked, Cell& cell) {
  const PlacementValues picks = ApplyAxisValues(config, picked, cell);
  if (picks.per_server > 0) {
    // Both at most kMaxProcesses, so their product fits in 64 bits.
    const int64_t num_proc = int64_t{picks.per_server} * cell.servers;
    if (num_proc > kMaxProcesses) {
      return Status::Error(picks.count->position.Prefix() + "processes_per_server " +
                           std::to_string(picks.per_server) + " on " + std::to_string(cell.servers) +
                           " servers makes " + std::to_string(num_proc) + " processes, more than hvdrun's " +
                           std::to_string(kMaxProcesses) + " (cell " + DescribeCell(cell) + ")");
    }
    cell.num_proc = static_cast<int>(num_proc);
  }
  if (Status placed = PlaceCell(config, machine, picks, cell); !placed.ok()) return placed;
  const std::string where = " (cell " + DescribeCell(cell) + ")";
  if (machine.slurm) {
    cell.hvdrun_args.insert(cell.hvdrun_args.begin(), {"--launcher", "slurm"});
  }
  if (picks.gpu != nullptr) {
    const std::string need = "one GPU per process: " + std::to_string(cell.procs_per_server) + " per server";
    if (config.gpus_per_server >= 0 && cell.procs_per_server > config.gpus_per_server) {
      return Status::Error(picks.gpu->position.Prefix() + "'" + picks.gpu->text + "' needs " + need +
                           ", but gpus_per_server is " + std::to_string(config.gpus_per_server) +
                           "; exclude the cell" + where);
    }
    if (cell.procs_per_server > machine.gpus) {
      cell.skip_reason = "'" + picks.gpu->text + "' needs " + need + "; this machine has " +
                         std::to_string(machine.gpus) + " (" + machine.gpus_source + ")";
    }
  }
  return Status::Ok();
}

void AssignIds(std::vector<Cell>& cells) {
  std::map<std::string, int> uses;
  for (Cell& cell : cells) {
    std::string id;
    std::string canonical;
    for (const auto& [name, value] : cell.values) {
      if (!id.empty()) id += '_';
      id += SlugForFileName(name) + "-" + SlugForFileName(value);
      canonical += name + '\0' + value + '\0';
    }
    if (id.size() > kMaxIdLength) id = id.substr(0, kMaxIdLength) + "_" + HashHex(canonical);
    cell.id = id;
    ++uses[id];
  }
  for (Cell& cell : cells) {
    if (uses[cell.id] < 2) continue;
    std::string canonical;
    for (const auto& [name, value] : cell.values) canonical += name + '\0' + value + '\0';
    cell.id += '_';
    cell.id += HashHex(canonical);
  }
}

}  // namespace

StatusOr<Matrix> ExpandMatrix(const ExperimentConfig& config, const MachineFacts& machine) {
  Matrix matrix;
  matrix.slurm = machine.slurm;
  size_t combinations = 1;
  for (const Axis& axis : config.axes) {
    combinations *= axis.values.size();
    if (combinations > kMaxCombinations) {
      return Status::Error(axis.position.Prefix() + "the matrix has more than " +
                           std::to_string(kMaxCombinations) + " combinations");
    }
  }
  for (size_t k = 0; k < combinations; ++k) {
    // The odometer: the last axis turns fastest.
    std::vector<const AxisValue*> picked(config.axes.size());
    size_t rest = k;
    for (size_t i = config.axes.size(); i-- > 0;) {
      picked[i] = &config.axes[i].values[rest % config.axes[i].values.size()];
      rest /= config.axes[i].values.size();
    }
    Cell cell;
    for (size_t i = 0; i < config.axes.size(); ++i) {
      cell.values.emplace_back(config.axes[i].name, picked[i]->text);
    }
    if (std::any_of(config.excludes.begin(), config.excludes.end(),
                    [&](const ExcludeRule& rule) { return Excluded(rule, cell); })) {
      ++matrix.excluded;
      continue;
    }
    Cell built;
    if (Status status = BuildCell(config, machine, picked, built); !status.ok()) {
      // Errors quote the file's values; a control character in one stays out of the line.
      return Status::Error(OneLineText(status.message()));
    }
    matrix.cells.push_back(std::move(built));
  }
  const int64_t runs = static_cast<int64_t>(matrix.cells.size()) * config.repeats;
  if (runs > kMaxRuns) {
    return Status::Error(SourcePosition{config.path, 0, 0}.Prefix() + std::to_string(matrix.cells.size()) +
                         " cells of " + std::to_string(config.repeats) + " runs each make " +
                         std::to_string(runs) + " runs, more than the " + std::to_string(kMaxRuns) +
                         " hvdrun-lab makes of one experiment; exclude cells or lower repeats");
  }
  AssignIds(matrix.cells);
  return matrix;
}

std::string DescribeCell(const Cell& cell) {
  std::string out;
  for (const auto& [name, value] : cell.values) out += (out.empty() ? "" : " ") + name + "=" + value;
  return out;
}

std::string CellValue(const Cell& cell, const std::string& name) {
  for (const auto& [axis, value] : cell.values) {
    if (axis == name) return value;
  }
  return "";
}

std::vector<std::string> HvdrunArguments(const Cell& cell, const std::string& program,
                                         const std::string& results_dir, const std::string& logs_dir) {
  std::string hosts;
  for (const HostSlots& host : cell.hosts) {
    if (!hosts.empty()) hosts += ',';
    hosts += FormatHostSlots(host);
  }
  std::vector<std::string> args = {"-np", std::to_string(cell.num_proc), "-H", hosts, "--" + cell.backend};
  for (const std::string& variable : cell.env) {
    args.push_back("-x");
    args.push_back(variable);
  }
  args.insert(args.end(), cell.hvdrun_args.begin(), cell.hvdrun_args.end());
  args.insert(args.end(), {"--results", results_dir, "--output-filename", logs_dir, "--", program});
  args.insert(args.end(), cell.program_args.begin(), cell.program_args.end());
  return args;
}

std::string ResolveProgram(const ExperimentConfig& config, const std::string& self_dir) {
  namespace fs = std::filesystem;
  const std::string& program = config.program;
  if (program.find('/') != std::string::npos) {
    fs::path path(program);
    if (path.is_relative()) path = fs::path(config.path).parent_path() / path;
    std::error_code error;
    fs::path absolute = fs::absolute(path, error);
    return error ? path.string() : absolute.lexically_normal().string();
  }
  if (!self_dir.empty()) {
    fs::path beside = fs::path(self_dir) / program;
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return program;
}

}  // namespace hvdrun::lab
