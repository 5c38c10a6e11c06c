#include "launcher/launch_flags.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

#include "common/env_names.h"
#include "common/host/network_interfaces.h"
#include "common/placement/hostfile.h"
#include "common/protocol/mpi_job_values.h"
#include "common/shell_words.h"
#include "common/whole_number.h"

namespace hvdrun {
namespace {

bool IsEnvName(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

// Sets `*target` from `flag`'s text when it was given.
Status ResolveGivenNumber(const LaunchFlags& flags, const std::string& flag, const std::string& shown,
                          const std::string& text, int min, int max, int* target) {
  if (!flags.Given(flag)) return Status::Ok();
  StatusOr<int> number = ResolveWholeNumber(shown, text, min, max);
  if (!number.ok()) return number.status();
  *target = number.value();
  return Status::Ok();
}

StatusOr<AgentStart> ResolveAgentStart(const LaunchFlags& flags, bool in_allocation, bool hosts_given) {
  if (!flags.Given("--launcher")) {
    return in_allocation && !hosts_given ? AgentStart::kSlurm : AgentStart::kSsh;
  }
  for (AgentStart start : {AgentStart::kSsh, AgentStart::kSlurm, AgentStart::kLocal}) {
    if (flags.launcher == AgentStartName(start)) return start;
  }
  return Status::Error("--launcher '" + flags.launcher + "': one of ssh, slurm, local");
}

// Where the hosts come from inside a Slurm allocation, and the -np that fits them. `hosts_given`:
// -H or --hostfile was given (`options.hosts` holds them).
Status UseSlurmAllocation(const GetEnv& getenv, bool hosts_given, LaunchOptions& options) {
  StatusOr<std::optional<SlurmAllocation>> read = ReadSlurmAllocation(getenv);
  if (!read.ok()) return read.status();
  if (!read.value()) {
    return Status::Error(std::string("--launcher slurm: not inside a Slurm allocation (") + env::kSlurmJobId +
                         " is not set); run hvdrun under salloc or sbatch");
  }
  const SlurmAllocation& allocation = *read.value();
  const std::string described = "Slurm job " + allocation.job_id + " (" + env::kSlurmJobNodeList + "='" +
                                allocation.node_list + "', " + env::kSlurmTasksPerNode + "='" +
                                allocation.tasks_per_node + "')";
  if (hosts_given) {
    for (const HostSlots& host : options.hosts) {
      if (!host.user.empty()) {
        return Status::Error("--launcher slurm: host '" + host.user + "@" + host.host +
                             "': srun starts the agents as the job's own user, so a login name does not "
                             "apply; drop '" +
                             host.user + "@' (or give --launcher ssh)");
      }
      bool in_allocation = std::any_of(allocation.nodes.begin(), allocation.nodes.end(),
                                       [&](const HostSlots& node) { return node.host == host.host; });
      if (!in_allocation) {
        return Status::Error("--launcher slurm: host '" + host.host + "' is not a node of " + described);
      }
    }
  } else {
    options.hosts = allocation.nodes;
    if (options.num_proc == 0) options.num_proc = std::min(allocation.num_tasks, TotalSlots(options.hosts));
    if (options.num_proc > TotalSlots(options.hosts)) {
      return Status::Error("-np " + std::to_string(options.num_proc) + ": " + described + " holds " +
                           std::to_string(TotalSlots(options.hosts)) +
                           " tasks; ask Slurm for more (salloc -n) or give a smaller -np");
    }
  }
  options.slurm = allocation;
  return Status::Ok();
}

StatusOr<RankSetting> ResolveCycleTime(const std::string& text) {
  char* end = nullptr;
  const double ms = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(ms >= 0 && ms <= 60000)) {
    return Status::Error("--cycle-time-ms: '" + text + "' is not a number of milliseconds from 0 to 60000");
  }
  return RankSetting{"--cycle-time-ms", env::kHorovodCycleTime, text};
}

StatusOr<RankSetting> ResolveCompression(const std::string& text, const std::optional<BackendKind>& backend) {
  const std::optional<CompressionFormat> format = ParseCompressionFormat(text);
  if (!format) {
    return Status::Error("--compression: '" + text +
                         "' is not a compression (none, fp16, bf16, fp8, fp8-e4m3, fp8-e5m2)");
  }
  if (!backend) return Status::Error("--compression: compression is libhvdrun's; give --gloo or --mpi");
  if (*backend == BackendKind::kNccl && *format != CompressionFormat::kNone) {
    return Status::Error("--compression: " + text +
                         " converts gradients in host memory and --nccl's are on the GPU; compress over "
                         "--gloo or --mpi");
  }
  return RankSetting{"--compression", env::kCompression, std::string(CompressionFormatName(*format))};
}

// fp8's safeguards, each on unless switched off (docs/compression.md).
Status ResolveFp8Safeguards(const LaunchFlags& flags, std::vector<RankSetting>& tuning) {
  const struct {
    const char* flag;
    const char* name;
    const std::string& text;
  } safeguards[] = {
      {"--fp8-scaling", env::kFp8Scaling, flags.fp8_scaling},
      {"--fp8-safe-cast", env::kFp8SafeCast, flags.fp8_safe_cast},
      {"--fp8-float32-sums", env::kFp8Float32Sums, flags.fp8_float32_sums},
      {"--error-feedback", env::kErrorFeedback, flags.error_feedback},
  };
  for (const auto& safeguard : safeguards) {
    if (!flags.Given(safeguard.flag)) continue;
    if (safeguard.text != "on" && safeguard.text != "off") {
      return Status::Error(std::string(safeguard.flag) + ": '" + safeguard.text + "' is not on or off");
    }
    if (flags.compression.rfind("fp8", 0) != 0) {
      return Status::Error(std::string(safeguard.flag) +
                           ": a safeguard of fp8 compression; give --compression fp8");
    }
    tuning.push_back({safeguard.flag, safeguard.name, safeguard.text == "on" ? "1" : "0"});
  }
  return Status::Ok();
}

// libhvdrun's shared-memory allreduce for ranks on one host (HVDRUN_SHM), on unless switched off.
StatusOr<RankSetting> ResolveSharedMemory(const std::string& text,
                                          const std::optional<BackendKind>& backend) {
  if (text != "on" && text != "off") return Status::Error("--shared-memory: '" + text + "' is not on or off");
  if (!backend || *backend == BackendKind::kNccl) {
    return Status::Error("--shared-memory: libhvdrun's path for host memory; give --gloo or --mpi");
  }
  return RankSetting{"--shared-memory", env::kSharedMemory, text == "on" ? "1" : "0"};
}

}  // namespace

StatusOr<int> ResolveWholeNumber(const std::string& flag, const std::string& text, int min, int max) {
  const ParsedWholeNumber number = ParseWholeNumber(text, min, max);
  if (number.out_of_range()) {
    return Status::Error(flag + ": " + text + " is out of range (" + std::to_string(min) + " to " +
                         std::to_string(max) + ")");
  }
  if (!number.ok()) return Status::Error(flag + ": '" + text + "' is not a whole number");
  return static_cast<int>(number.value);
}

Status ResolveNumbers(const LaunchFlags& flags, LaunchOptions& options) {
  if (Status s =
          ResolveGivenNumber(flags, "--num-proc", "-np", flags.num_proc, 1, 1 << 20, &options.num_proc);
      !s.ok()) {
    return s;
  }
  if (Status s = ResolveGivenNumber(flags, "--start-timeout", "--start-timeout", flags.start_timeout, 1,
                                    86400, &options.start_timeout_s);
      !s.ok()) {
    return s;
  }
  if (Status s = ResolveGivenNumber(flags, "--heartbeat-timeout", "--heartbeat-timeout",
                                    flags.heartbeat_timeout, 1, 86400, &options.heartbeat_timeout_s);
      !s.ok()) {
    return s;
  }
  return ResolveGivenNumber(flags, "--ssh-port", "--ssh-port", flags.ssh_port, 1, 65535, &options.ssh.port);
}

Status ResolvePlainValues(const LaunchFlags& flags, LaunchOptions& options) {
  options.output_dir = flags.output_dir;
  options.working_dir = flags.working_dir;
  options.results_dir = flags.results_dir;
  options.verbose = flags.verbose;
  options.check = flags.check;
  options.dry_run = flags.dry_run;
  options.ssh.user = flags.ssh_user;
  options.ssh.identity_file = flags.ssh_identity_file;
  options.ssh.known_hosts = flags.ssh_known_hosts;
  options.ssh.accept_new_host_keys = flags.ssh_accept_new_host_keys;
  options.remote_agent_path_given = flags.Given("--agent-path");
  if (options.remote_agent_path_given) options.remote_agent_path = flags.agent_path;
  options.timeline_file = flags.timeline_filename;
  options.timeline_mark_cycles = flags.timeline_mark_cycles;
  if (flags.Given("--ssh-user")) {
    const std::string problem = flags.ssh_user.empty() ? "an empty user name" : CheckUserName(flags.ssh_user);
    if (!problem.empty()) return Status::Error("--ssh-user '" + flags.ssh_user + "': " + problem);
  }
  if (flags.Given("--ssh-identity-file") && options.ssh.identity_file.empty()) {
    return Status::Error("--ssh-identity-file: an empty file name");
  }
  if (!options.ssh.identity_file.empty() && ::access(options.ssh.identity_file.c_str(), R_OK) != 0) {
    return Status::Error("--ssh-identity-file: cannot read '" + options.ssh.identity_file +
                         "': " + std::strerror(errno));
  }
  return Status::Ok();
}

Status ResolveBackend(const LaunchFlags& flags, LaunchOptions& options) {
  if (flags.gloo + flags.mpi + flags.nccl > 1) {
    return Status::Error("give at most one of --gloo, --mpi and --nccl");
  }
  if (flags.gloo) options.backend = BackendKind::kGloo;
  if (flags.mpi) options.backend = BackendKind::kMpi;
  if (flags.nccl) options.backend = BackendKind::kNccl;
  if (flags.dry_run && !flags.mpi) {
    return Status::Error("--dry-run: only with --mpi (it prints the mpirun command hvdrun would run)");
  }
  if (!flags.Given("--mpi-args")) return Status::Ok();
  if (!flags.mpi) return Status::Error("--mpi-args: only with --mpi (they are mpirun's arguments)");
  StatusOr<std::vector<std::string>> words = SplitShellWords(flags.mpi_args);
  if (!words.ok()) return Status::Error("--mpi-args: " + words.status().message());
  options.mpi_args = std::move(words).value();
  return Status::Ok();
}

Status ResolveCommand(const LaunchOptions& options) {
  if (options.check && !options.command.empty()) {
    return Status::Error("--check runs no command, but '" + options.command.front() + "' was given");
  }
  if (options.check && options.backend) return Status::Error("--check: starts no rank, so takes no backend");
  if (options.command.empty() && !options.check) {
    return Status::Error("no command given (usage: hvdrun [options] command [args...])");
  }
  return Status::Ok();
}

Status ResolveHosts(const LaunchFlags& flags, const GetEnv& getenv, LaunchOptions& options) {
  // Typed, even empty: an empty list or file name is refused by its parser, never taken as absent.
  const bool host_list = flags.Given("--hosts") || !flags.hosts.empty();
  const bool hostfile = flags.Given("--hostfile") || !flags.hostfile.empty();
  if (host_list && hostfile) return Status::Error("give either -H or --hostfile, not both");
  const bool hosts_given = host_list || hostfile;
  const char* slurm_job = getenv(env::kSlurmJobId);
  const bool in_allocation = slurm_job != nullptr && *slurm_job != '\0';
  StatusOr<AgentStart> start = ResolveAgentStart(flags, in_allocation, hosts_given);
  if (!start.ok()) return start.status();
  options.agent_start = start.value();
  if (hosts_given) {
    StatusOr<std::vector<HostSlots>> hosts =
        host_list ? ParseHostList(flags.hosts) : ReadHostfile(flags.hostfile);
    if (!hosts.ok()) return hosts.status();
    options.hosts = std::move(hosts).value();
  }
  if (options.agent_start == AgentStart::kSlurm ||
      (options.agent_start == AgentStart::kSsh && in_allocation && !hosts_given)) {
    if (Status status = UseSlurmAllocation(getenv, hosts_given, options); !status.ok()) return status;
  } else if (!hosts_given) {
    if (options.num_proc == 0 && !options.check) {
      return Status::Error("-np: give the number of processes (or hosts with -H or --hostfile)");
    }
    options.hosts = {HostSlots{"localhost", std::max(options.num_proc, 1)}};
  }
  if (options.num_proc == 0) options.num_proc = TotalSlots(options.hosts);
  return Status::Ok();
}

StatusOr<std::vector<std::string>> ResolveNetworkInterfaces(const std::vector<std::string>& texts) {
  std::vector<std::string> interfaces;
  for (const std::string& text : texts) {
    if (text.empty() || text.back() == ',') {
      return Status::Error("--network-interface '" + text + "': an empty interface name");
    }
    std::stringstream names(text);
    for (std::string name; std::getline(names, name, ',');) {
      if (!IsValidInterfaceName(name)) {
        return Status::Error("--network-interface '" + text + "': '" + name +
                             "' is not an interface name (1 to 15 characters, no '/', ':' or spaces)");
      }
      if (std::find(interfaces.begin(), interfaces.end(), name) == interfaces.end()) {
        interfaces.push_back(name);
      }
    }
  }
  return interfaces;
}

StatusOr<std::vector<std::string>> ResolveExports(const std::vector<std::string>& entries, bool mpi,
                                                  const GetEnv& getenv) {
  std::vector<std::string> exports;
  for (const std::string& entry : entries) {
    size_t equals = entry.find('=');
    std::string name = entry.substr(0, equals);
    if (!IsEnvName(name)) {
      return Status::Error("-x '" + entry + "': not a variable name (expected NAME or NAME=VALUE)");
    }
    if (mpi && IsMpiAgentVariable(name)) {
      return Status::Error("-x " + name + ": with --mpi, hvdrun-agent needs hvdrun's own value of " + name +
                           ", so it cannot be exported");
    }
    if (equals != std::string::npos) {
      exports.push_back(entry);
      continue;
    }
    const char* value = getenv(name.c_str());
    if (value == nullptr) {
      return Status::Error("-x " + name + ": " + name + " is not set in hvdrun's environment");
    }
    exports.push_back(name.append("=").append(value));
  }
  return exports;
}

StatusOr<std::vector<RankSetting>> ResolveTuning(const LaunchFlags& flags,
                                                 const std::optional<BackendKind>& backend) {
  std::vector<RankSetting> tuning;
  if (flags.Given("--fusion-threshold-mb")) {
    StatusOr<int> mib = ResolveWholeNumber("--fusion-threshold-mb", flags.fusion_threshold_mb, 0, 1 << 20);
    if (!mib.ok()) return mib.status();
    tuning.push_back({"--fusion-threshold-mb", env::kHorovodFusionThreshold,
                      std::to_string(static_cast<int64_t>(mib.value()) << 20)});
  }
  if (flags.Given("--cycle-time-ms")) {
    StatusOr<RankSetting> cycle = ResolveCycleTime(flags.cycle_time_ms);
    if (!cycle.ok()) return cycle.status();
    tuning.push_back(std::move(cycle).value());
  }
  if (flags.Given("--cache-capacity")) {
    StatusOr<int> capacity = ResolveWholeNumber("--cache-capacity", flags.cache_capacity, 0, 1 << 20);
    if (!capacity.ok()) return capacity.status();
    tuning.push_back({"--cache-capacity", env::kHorovodCacheCapacity, std::to_string(capacity.value())});
  }
  if (flags.Given("--compression")) {
    StatusOr<RankSetting> compression = ResolveCompression(flags.compression, backend);
    if (!compression.ok()) return compression.status();
    tuning.push_back(std::move(compression).value());
  }
  if (Status safeguards = ResolveFp8Safeguards(flags, tuning); !safeguards.ok()) return safeguards;
  if (flags.Given("--shared-memory")) {
    StatusOr<RankSetting> shared_memory = ResolveSharedMemory(flags.shared_memory, backend);
    if (!shared_memory.ok()) return shared_memory.status();
    tuning.push_back(std::move(shared_memory).value());
  }
  if (flags.hierarchical_allreduce && flags.no_hierarchical_allreduce) {
    return Status::Error("--hierarchical-allreduce and --no-hierarchical-allreduce: give one of them");
  }
  if (flags.no_hierarchical_allreduce) {
    tuning.push_back({"--no-hierarchical-allreduce", env::kHorovodHierarchicalAllreduce, "0"});
  }
  if (flags.hierarchical_allreduce) {
    if (backend != BackendKind::kGloo) {
      return Status::Error("--hierarchical-allreduce: libhvdrun's over --gloo only (hosts through Gloo)");
    }
    if (flags.shared_memory == "off") {
      return Status::Error(
          "--hierarchical-allreduce: reduces inside each host through shared memory, which "
          "--shared-memory off turns off");
    }
    tuning.push_back({"--hierarchical-allreduce", env::kHorovodHierarchicalAllreduce, "1"});
  }
  return tuning;
}

Status ResolveTimeline(const LaunchFlags& flags, const GetEnv& getenv, LaunchOptions& options) {
  // HOROVOD_TIMELINE names the merged file, as horovodrun's --timeline-filename sets it: given
  // with -x it is taken from the exports; in hvdrun's own environment it applies when neither is
  // (and the job has a backend).
  for (auto entry = options.exports.begin(); entry != options.exports.end(); ++entry) {
    if (entry->substr(0, entry->find('=')) != env::kHorovodTimeline) continue;
    if (!options.timeline_file.empty()) {
      return Status::Error("-x " + std::string(env::kHorovodTimeline) +
                           ": --timeline-filename sets it too; give one of them");
    }
    options.timeline_file = entry->substr(entry->find('=') + 1);
    if (options.timeline_file.empty()) return Status::Error("-x " + *entry + ": an empty file name");
    options.exports.erase(entry);
    break;
  }
  if (flags.Given("--timeline-filename") && options.timeline_file.empty()) {
    return Status::Error("--timeline-filename: an empty file name");
  }
  const char* inherited = getenv(env::kHorovodTimeline);
  if (options.timeline_file.empty() && options.backend && inherited != nullptr && *inherited != '\0') {
    options.timeline_file = inherited;
  }
  if (!options.timeline_file.empty() && !options.backend) {
    return Status::Error("--timeline-filename: the timeline is libhvdrun's; give --gloo, --mpi or --nccl");
  }
  if (options.timeline_mark_cycles && options.timeline_file.empty()) {
    return Status::Error("--timeline-mark-cycles: give --timeline-filename too");
  }
  return Status::Ok();
}

Status AddTuningExports(const std::vector<RankSetting>& tuning, LaunchOptions& options) {
  for (const RankSetting& setting : tuning) {
    for (const std::string& entry : options.exports) {
      if (entry.substr(0, entry.find('=')) == setting.name) {
        return Status::Error("-x " + setting.name + ": " + setting.flag + " sets it too; give one of them");
      }
    }
    options.exports.push_back(setting.name + "=" + setting.value);
  }
  return Status::Ok();
}

StatusOr<LaunchOptions> ResolveLaunchFlags(const LaunchFlags& flags, std::vector<std::string> command,
                                           const GetEnv& getenv) {
  LaunchOptions options;
  options.command = std::move(command);
  if (Status s = ResolveNumbers(flags, options); !s.ok()) return s;
  if (Status s = ResolvePlainValues(flags, options); !s.ok()) return s;
  if (Status s = ResolveBackend(flags, options); !s.ok()) return s;
  if (Status s = ResolveCommand(options); !s.ok()) return s;
  if (Status s = ResolveHosts(flags, getenv, options); !s.ok()) return s;
  StatusOr<std::vector<std::string>> interfaces = ResolveNetworkInterfaces(flags.network_interfaces);
  if (!interfaces.ok()) return interfaces.status();
  options.network_interfaces = std::move(interfaces).value();
  StatusOr<std::vector<std::string>> exports = ResolveExports(flags.exports, flags.mpi, getenv);
  if (!exports.ok()) return exports.status();
  options.exports = std::move(exports).value();
  StatusOr<std::vector<RankSetting>> tuning = ResolveTuning(flags, options.backend);
  if (!tuning.ok()) return tuning.status();
  if (Status s = ResolveTimeline(flags, getenv, options); !s.ok()) return s;
  if (Status s = AddTuningExports(tuning.value(), options); !s.ok()) return s;
  return options;
}

}  // namespace hvdrun
