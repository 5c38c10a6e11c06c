#include "launcher/launch_options.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <sstream>

#include "common/env_names.h"
#include "common/host/network_interfaces.h"
#include "common/placement/hostfile.h"
#include "common/shell_words.h"
#include "common/version.h"
#include "common/whole_number.h"
#include "launcher/mpi_command.h"

namespace hvdrun {
namespace {

constexpr int kUsageError = 2;

bool IsEnvName(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

// Finds where the command starts, validating every option word before it. CLI11 gives options
// one-letter short names only, so horovodrun's `-np` is rewritten to `--num-proc` here; nothing
// at or after the command is ever rewritten.
StatusOr<size_t> SplitOptions(const CLI::App& app, std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string& word = args[i];
    if (word == "--") return i;
    if (word.size() < 2 || word[0] != '-') return i;
    std::string typed = word;
    if (word == "-np") word = "--num-proc";
    std::string name = word;
    bool value_attached = false;
    if (word.rfind("--", 0) == 0) {
      size_t equals = word.find('=');
      value_attached = equals != std::string::npos;
      name = word.substr(0, equals);
    } else if (word.size() > 2) {
      name = word.substr(0, 2);  // -Hhost:2
      value_attached = true;
    }
    const CLI::Option* option = app.get_option_no_throw(name);
    if (option == nullptr && name != "-h" && name != "--help" && name != "--version") {
      return Status::Error("unknown option '" + typed + "' (see hvdrun --help)");
    }
    if (option != nullptr && option->get_items_expected_min() > 0 && !value_attached) {
      if (i + 1 == args.size()) return Status::Error(typed + ": needs a value");
      // A long option's value is attached, so that CLI11 takes it as it is even when it starts
      // with '-' (--mpi-args "-mca btl ^openib").
      if (word.rfind("--", 0) == 0) {
        word += "=" + args[i + 1];
        args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        continue;
      }
      ++i;
    }
  }
  return args.size();
}

// Parses a flag's whole-number value in [min, max]; the error names the flag as the user knows it.
StatusOr<int> ParseFlagWholeNumber(const std::string& flag, const std::string& text, int min, int max) {
  const ParsedWholeNumber number = ParseWholeNumber(text, min, max);
  if (number.out_of_range()) {
    return Status::Error(flag + ": " + text + " is out of range (" + std::to_string(min) + " to " +
                         std::to_string(max) + ")");
  }
  if (!number.ok()) return Status::Error(flag + ": '" + text + "' is not a whole number");
  return static_cast<int>(number.value);
}

// Where the hosts come from inside a Slurm allocation, and the -np that fits them. `hosts_given`:
// -H or --hostfile was given (`options.hosts` holds them).
Status UseSlurmAllocation(const std::function<const char*(const char*)>& getenv, bool hosts_given,
                          LaunchOptions& options) {
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

}  // namespace

const char* AgentStartName(AgentStart start) {
  switch (start) {
    case AgentStart::kSsh:
      return "ssh";
    case AgentStart::kSlurm:
      return "slurm";
    case AgentStart::kLocal:
      return "local";
  }
  return "ssh";
}

std::string DescribeAgentStart(const LaunchOptions& options) {
  std::string text = AgentStartName(options.agent_start);
  if (!options.slurm) return text;
  return text + " (Slurm job " + options.slurm->job_id + ": " + env::kSlurmJobNodeList + "='" +
         options.slurm->node_list + "', " + env::kSlurmTasksPerNode + "='" + options.slurm->tasks_per_node +
         "')";
}

ParsedCommandLine ParseCommandLine(int argc, const char* const* argv,
                                   const std::function<const char*(const char*)>& getenv) {
  ParsedCommandLine result;
  LaunchOptions options;
  std::string hosts_text;
  std::string hostfile;
  std::vector<std::string> exports;
  std::string num_proc_text;
  std::string start_timeout_text;
  std::string fusion_threshold_text;
  std::string cycle_time_text;
  std::string cache_capacity_text;

  CLI::App app("hvdrun: run a distributed-training job over hosts, one process per rank.", "hvdrun");
  app.footer(
      "Examples:\n"
      "  hvdrun -np 4 python3 train.py               four ranks on this machine\n"
      "  hvdrun -np 8 -H localhost:4,127.0.0.1:4 ./train\n"
      "  hvdrun -np 4 --hostfile hosts.txt --output-filename logs/ ./train\n"
      "  hvdrun -np 4 --mpi hvdrun-bench -b 1M -e 64M    the ranks under Open MPI's mpirun\n"
      "  salloc -N 2 --ntasks-per-node=4 hvdrun --gloo ./train    hosts, slots, -np from Slurm\n"
      "Every rank gets HVDRUN_RANK, HVDRUN_SIZE, HVDRUN_LOCAL_RANK, ... and the same values under\n"
      "Horovod's (HOROVOD_RANK, ...) and PyTorch's names (RANK, WORLD_SIZE, MASTER_ADDR, ...).");
  app.set_version_flag("--version", std::string("hvdrun ") + kVersion);
  app.add_option(
      "--num-proc", num_proc_text,
      "Number of processes (ranks); written -np as in horovodrun. Default: every slot of the hosts");
  app.add_option(
      "-H,--hosts", hosts_text,
      "Hosts and their slots: [user@]host[:slots],... (IPv6 as [addr]:slots; user@ overrides "
      "--ssh-user for that host, and is an error with --launcher slurm). Default: localhost with -np "
      "slots");
  app.add_option("--hostfile", hostfile, "File of 'host slots=N' lines (mpirun/horovodrun format)");
  std::string launcher_text;
  app.add_option("--launcher", launcher_text,
                 "How each host's agent starts: ssh (a child process here, SSH elsewhere), slurm (srun "
                 "inside a Slurm allocation; hosts, slots and -np from the allocation unless -H/--hostfile "
                 "or -np say otherwise) or local (all on this machine). Default: slurm inside an "
                 "allocation (SLURM_JOB_ID set) without -H/--hostfile, else ssh");
  app.add_option("--output-filename", options.output_dir,
                 "Also write each rank's output to DIR/rank.N/stdout and DIR/rank.N/stderr");
  app.add_option("--start-timeout", start_timeout_text,
                 "Seconds to wait for every host's agent to start (default 30)");
  app.add_flag("--verbose", options.verbose, "Print what hvdrun does: hosts, agents, ranks");
  std::string heartbeat_timeout_text;
  std::string ssh_port_text;
  app.add_option("--heartbeat-timeout", heartbeat_timeout_text,
                 "Seconds of silence after which an agent, or the launcher, counts as lost (default 30)");
  app.add_option("--ssh-user", options.ssh.user,
                 "User on hosts that are not this machine (default: ~/.ssh/config's, else your own)");
  app.add_option("-p,--ssh-port", ssh_port_text, "SSH port of the hosts (default: ~/.ssh/config's, else 22)");
  app.add_option("-i,--ssh-identity-file", options.ssh.identity_file,
                 "Private key to log in with, after the ssh-agent's keys and before ~/.ssh/id_*");
  app.add_option("--ssh-known-hosts", options.ssh.known_hosts,
                 "known_hosts file to check host keys against (default ~/.ssh/known_hosts)");
  app.add_flag(
      "--ssh-accept-new-host-keys", options.ssh.accept_new_host_keys,
      "Trust hosts missing from known_hosts and record their keys (a changed key is always refused)");
  app.add_option("--agent-path", options.remote_agent_path,
                 "hvdrun-agent on the remote hosts (default: hvdrun-agent in their PATH, else the path of "
                 "this machine's hvdrun-agent)");
  app.add_option("--cwd", options.working_dir,
                 "Working directory of the ranks on every host (default: hvdrun's)");
  bool gloo = false;
  bool mpi = false;
  bool nccl = false;
  std::string mpi_args_text;
  app.add_flag("--gloo", gloo,
               "Ranks use Gloo (TCP) for collectives; hvdrun runs the job's rendezvous service");
  app.add_flag(
      "--mpi", mpi,
      "Run the ranks with Open MPI's mpirun, as horovodrun --mpi does; they use MPI for collectives, "
      "and hvdrun still collects their output, exit statuses and reports");
  app.add_flag("--nccl", nccl,
               "Ranks use NCCL (GPUs) for collectives; hvdrun runs the job's rendezvous service");
  app.add_flag("--dry-run", options.dry_run,
               "With --mpi: print the mpirun command hvdrun would run; start nothing");
  app.add_option("--mpi-args", mpi_args_text,
                 "With --mpi: more mpirun arguments, as one string split into words as a shell would "
                 "(quotes '...' \"...\" and \\ work; nothing is expanded)");
  app.add_option("--results", options.results_dir,
                 "Write plan.json, ranks/rank-N.json (each rank's report) and summary.json to DIR");
  app.add_flag("--check", options.check,
               "Check the hosts: start each one's agent, print its facts (OS, kernel, CPUs, memory, NICs, "
               "GPUs, MPI/Gloo/NCCL/CUDA versions), start no rank; exit 0 when every host answers with the "
               "same versions");
  std::vector<std::string> interface_texts;
  app.add_option("--network-interface,--network-interfaces", interface_texts,
                 "Network interface for the job's traffic (rendezvous, MASTER_ADDR, Gloo, NCCL, MPI); "
                 "repeatable or comma-separated: each host uses the first it has. Default: the interface "
                 "the hosts reach this machine by")
      ->allow_extra_args(false);
  app.add_option("-x", exports, "Export NAME (hvdrun's value) or NAME=VALUE to every rank; repeatable")
      ->allow_extra_args(false);
  app.add_option("--fusion-threshold-mb", fusion_threshold_text,
                 "libhvdrun's tensor fusion: the largest fused buffer, in MiB; 0 turns fusion off (default "
                 "128; HOROVOD_FUSION_THRESHOLD for the ranks)");
  app.add_option("--cycle-time-ms", cycle_time_text,
                 "libhvdrun's negotiation cycle, in ms (default 1; HOROVOD_CYCLE_TIME for the ranks)");
  app.add_option(
      "--cache-capacity", cache_capacity_text,
      "libhvdrun's response cache, in entries; 0 turns it off (default 1024; HOROVOD_CACHE_CAPACITY)");
  std::string compression_text;
  app.add_option("--compression", compression_text,
                 "libhvdrun's gradient compression: float32 sums and averages travel as none (default), "
                 "fp16, bf16, fp8 (E4M3; also fp8-e4m3) or fp8-e5m2 (HVDRUN_COMPRESSION for the ranks)");
  // fp8's safeguards, each on unless switched off (docs/compression.md).
  const struct {
    const char* flag;
    const char* name;
    const char* help;
  } safeguards[] = {
      {"--fp8-scaling", env::kFp8Scaling,
       "With fp8 compression: scale blocks of values by a power of two shared by every rank, so that "
       "small gradients survive (on|off; default on)"},
      {"--fp8-safe-cast", env::kFp8SafeCast,
       "With fp8 compression: values beyond fp8's range saturate and small ones keep subnormal precision; "
       "off, a naive cast makes them NaN and zero (on|off; default on)"},
      {"--fp8-float32-sums", env::kFp8Float32Sums,
       "With fp8 compression: sum every rank's values in float32, never in fp8 (on|off; default on)"},
      {"--error-feedback", env::kErrorFeedback,
       "With fp8 compression: add what encoding lost to the same tensor's next values (on|off; default on)"},
  };
  std::string safeguard_texts[std::size(safeguards)];
  for (size_t i = 0; i < std::size(safeguards); ++i) {
    app.add_option(safeguards[i].flag, safeguard_texts[i], safeguards[i].help);
  }
  app.add_option("--timeline-filename", options.timeline_file,
                 "Record every rank's libhvdrun timeline and merge them into FILE, a Chrome trace for "
                 "Perfetto or chrome://tracing, one process per rank (also: HOROVOD_TIMELINE)");
  app.add_flag("--timeline-mark-cycles", options.timeline_mark_cycles,
               "With --timeline-filename: mark each negotiation cycle in the timeline");

  std::vector<std::string> args(argv + 1, argv + argc);
  StatusOr<size_t> command_start = SplitOptions(app, args);
  if (!command_start.ok()) {
    result.exit_code = kUsageError;
    result.error = command_start.status().message();
    return result;
  }
  std::vector<std::string> option_args(args.begin(),
                                       args.begin() + static_cast<std::ptrdiff_t>(command_start.value()));
  size_t first = command_start.value();
  if (first < args.size() && args[first] == "--") ++first;
  options.command.assign(args.begin() + static_cast<std::ptrdiff_t>(first), args.end());

  try {
    std::reverse(option_args.begin(), option_args.end());  // CLI11 takes a vector in reverse order
    app.parse(option_args);
  } catch (const CLI::Success& success) {
    std::ostringstream out;
    std::ostringstream err;
    result.exit_code = app.exit(success, out, err);
    std::fputs(out.str().c_str(), stdout);
    return result;
  } catch (const CLI::ParseError& error) {
    result.exit_code = kUsageError;
    result.error = error.what();
    return result;
  }

  auto usage_error = [&](const std::string& message) {
    result.exit_code = kUsageError;
    result.error = message;
    return result;
  };
  if (app.count("--num-proc") > 0) {
    StatusOr<int> num_proc = ParseFlagWholeNumber("-np", num_proc_text, 1, 1 << 20);
    if (!num_proc.ok()) return usage_error(num_proc.status().message());
    options.num_proc = num_proc.value();
  }
  if (app.count("--start-timeout") > 0) {
    StatusOr<int> timeout = ParseFlagWholeNumber("--start-timeout", start_timeout_text, 1, 86400);
    if (!timeout.ok()) return usage_error(timeout.status().message());
    options.start_timeout_s = timeout.value();
  }
  if (app.count("--heartbeat-timeout") > 0) {
    StatusOr<int> timeout = ParseFlagWholeNumber("--heartbeat-timeout", heartbeat_timeout_text, 1, 86400);
    if (!timeout.ok()) return usage_error(timeout.status().message());
    options.heartbeat_timeout_s = timeout.value();
  }
  if (app.count("--ssh-port") > 0) {
    StatusOr<int> port = ParseFlagWholeNumber("--ssh-port", ssh_port_text, 1, 65535);
    if (!port.ok()) return usage_error(port.status().message());
    options.ssh.port = port.value();
  }
  options.remote_agent_path_given = app.count("--agent-path") > 0;
  if (!options.ssh.identity_file.empty() && ::access(options.ssh.identity_file.c_str(), R_OK) != 0) {
    return usage_error("--ssh-identity-file: cannot read '" + options.ssh.identity_file +
                       "': " + std::strerror(errno));
  }
  if (gloo + mpi + nccl > 1) return usage_error("give at most one of --gloo, --mpi and --nccl");
  if (gloo) options.backend = BackendKind::kGloo;
  if (mpi) options.backend = BackendKind::kMpi;
  if (nccl) options.backend = BackendKind::kNccl;
  if (options.dry_run && !mpi) {
    return usage_error("--dry-run: only with --mpi (it prints the mpirun command hvdrun would run)");
  }
  if (app.count("--mpi-args") > 0) {
    if (!mpi) return usage_error("--mpi-args: only with --mpi (they are mpirun's arguments)");
    StatusOr<std::vector<std::string>> words = SplitShellWords(mpi_args_text);
    if (!words.ok()) return usage_error("--mpi-args: " + words.status().message());
    options.mpi_args = std::move(words).value();
  }
  if (options.check && !options.command.empty()) {
    return usage_error("--check runs no command, but '" + options.command.front() + "' was given");
  }
  if (options.check && options.backend) return usage_error("--check: starts no rank, so takes no backend");
  if (options.command.empty() && !options.check) {
    return usage_error("no command given (usage: hvdrun [options] command [args...])");
  }
  if (!hosts_text.empty() && !hostfile.empty()) return usage_error("give either -H or --hostfile, not both");
  const bool hosts_given = !hosts_text.empty() || !hostfile.empty();
  const char* slurm_job = getenv(env::kSlurmJobId);
  const bool in_allocation = slurm_job != nullptr && *slurm_job != '\0';
  if (app.count("--launcher") > 0) {
    if (launcher_text == "ssh") {
      options.agent_start = AgentStart::kSsh;
    } else if (launcher_text == "slurm") {
      options.agent_start = AgentStart::kSlurm;
    } else if (launcher_text == "local") {
      options.agent_start = AgentStart::kLocal;
    } else {
      return usage_error("--launcher '" + launcher_text + "': one of ssh, slurm, local");
    }
  } else if (in_allocation && !hosts_given) {
    options.agent_start = AgentStart::kSlurm;
  }
  if (!hosts_text.empty()) {
    StatusOr<std::vector<HostSlots>> hosts = ParseHostList(hosts_text);
    if (!hosts.ok()) return usage_error(hosts.status().message());
    options.hosts = std::move(hosts).value();
  } else if (!hostfile.empty()) {
    StatusOr<std::vector<HostSlots>> hosts = ReadHostfile(hostfile);
    if (!hosts.ok()) return usage_error(hosts.status().message());
    options.hosts = std::move(hosts).value();
  }
  if (options.agent_start == AgentStart::kSlurm ||
      (options.agent_start == AgentStart::kSsh && in_allocation && !hosts_given)) {
    if (Status status = UseSlurmAllocation(getenv, hosts_given, options); !status.ok()) {
      return usage_error(status.message());
    }
  } else if (!hosts_given) {
    if (options.num_proc == 0 && !options.check) {
      return usage_error("-np: give the number of processes (or hosts with -H or --hostfile)");
    }
    options.hosts = {HostSlots{"localhost", std::max(options.num_proc, 1)}};
  }
  if (options.num_proc == 0) options.num_proc = TotalSlots(options.hosts);

  for (const std::string& text : interface_texts) {
    if (text.empty() || text.back() == ',') {
      return usage_error("--network-interface '" + text + "': an empty interface name");
    }
    std::stringstream names(text);
    for (std::string name; std::getline(names, name, ',');) {
      if (!IsValidInterfaceName(name)) {
        return usage_error("--network-interface '" + text + "': '" + name +
                           "' is not an interface name (1 to 15 characters, no '/', ':' or spaces)");
      }
      if (std::find(options.network_interfaces.begin(), options.network_interfaces.end(), name) ==
          options.network_interfaces.end()) {
        options.network_interfaces.push_back(name);
      }
    }
  }

  for (const std::string& entry : exports) {
    size_t equals = entry.find('=');
    std::string name = entry.substr(0, equals);
    if (!IsEnvName(name)) {
      return usage_error("-x '" + entry + "': not a variable name (expected NAME or NAME=VALUE)");
    }
    if (mpi && IsMpiAgentVariable(name)) {
      return usage_error("-x " + name + ": with --mpi, hvdrun-agent needs hvdrun's own value of " + name +
                         ", so it cannot be exported");
    }
    if (equals != std::string::npos) {
      options.exports.push_back(entry);
      continue;
    }
    const char* value = getenv(name.c_str());
    if (value == nullptr) {
      return usage_error("-x " + name + ": " + name + " is not set in hvdrun's environment");
    }
    options.exports.push_back(name.append("=").append(value));
  }
  // The tuning flags reach the ranks as Horovod's variables, which libhvdrun reads.
  struct Tuning {
    const char* flag;
    const char* name;
    std::string value;
  };
  std::vector<Tuning> tuning;
  if (app.count("--fusion-threshold-mb") > 0) {
    StatusOr<int> mib = ParseFlagWholeNumber("--fusion-threshold-mb", fusion_threshold_text, 0, 1 << 20);
    if (!mib.ok()) return usage_error(mib.status().message());
    tuning.push_back({"--fusion-threshold-mb", env::kHorovodFusionThreshold,
                      std::to_string(static_cast<int64_t>(mib.value()) << 20)});
  }
  if (app.count("--cycle-time-ms") > 0) {
    char* end = nullptr;
    const double ms = std::strtod(cycle_time_text.c_str(), &end);
    if (cycle_time_text.empty() || *end != '\0' || !(ms >= 0 && ms <= 60000)) {
      return usage_error("--cycle-time-ms: '" + cycle_time_text +
                         "' is not a number of milliseconds from 0 to 60000");
    }
    tuning.push_back({"--cycle-time-ms", env::kHorovodCycleTime, cycle_time_text});
  }
  if (app.count("--cache-capacity") > 0) {
    StatusOr<int> capacity = ParseFlagWholeNumber("--cache-capacity", cache_capacity_text, 0, 1 << 20);
    if (!capacity.ok()) return usage_error(capacity.status().message());
    tuning.push_back({"--cache-capacity", env::kHorovodCacheCapacity, std::to_string(capacity.value())});
  }
  if (app.count("--compression") > 0) {
    const std::optional<CompressionFormat> format = ParseCompressionFormat(compression_text);
    if (!format) {
      return usage_error("--compression: '" + compression_text +
                         "' is not a compression (none, fp16, bf16, fp8, fp8-e4m3, fp8-e5m2)");
    }
    if (!options.backend) {
      return usage_error("--compression: compression is libhvdrun's; give --gloo or --mpi");
    }
    if (*options.backend == BackendKind::kNccl && *format != CompressionFormat::kNone) {
      return usage_error("--compression: " + compression_text +
                         " converts gradients in host memory and --nccl's are on the GPU; compress over "
                         "--gloo or --mpi");
    }
    tuning.push_back({"--compression", env::kCompression, std::string(CompressionFormatName(*format))});
  }
  for (size_t i = 0; i < std::size(safeguards); ++i) {
    if (app.count(safeguards[i].flag) == 0) continue;
    const std::string& text = safeguard_texts[i];
    if (text != "on" && text != "off") {
      return usage_error(std::string(safeguards[i].flag) + ": '" + text + "' is not on or off");
    }
    if (compression_text.rfind("fp8", 0) != 0) {
      return usage_error(std::string(safeguards[i].flag) +
                         ": a safeguard of fp8 compression; give --compression fp8");
    }
    tuning.push_back({safeguards[i].flag, safeguards[i].name, text == "on" ? "1" : "0"});
  }
  // HOROVOD_TIMELINE names the merged file, as horovodrun's --timeline-filename sets it: given
  // with -x it is taken from the exports; in hvdrun's own environment it applies when neither is
  // (and the job has a backend).
  for (auto entry = options.exports.begin(); entry != options.exports.end(); ++entry) {
    if (entry->substr(0, entry->find('=')) != env::kHorovodTimeline) continue;
    if (!options.timeline_file.empty()) {
      return usage_error("-x " + std::string(env::kHorovodTimeline) +
                         ": --timeline-filename sets it too; give one of them");
    }
    options.timeline_file = entry->substr(entry->find('=') + 1);
    if (options.timeline_file.empty()) return usage_error("-x " + *entry + ": an empty file name");
    options.exports.erase(entry);
    break;
  }
  if (app.count("--timeline-filename") > 0 && options.timeline_file.empty()) {
    return usage_error("--timeline-filename: an empty file name");
  }
  const char* inherited = getenv(env::kHorovodTimeline);
  if (options.timeline_file.empty() && options.backend && inherited != nullptr && *inherited != '\0') {
    options.timeline_file = inherited;
  }
  if (!options.timeline_file.empty() && !options.backend) {
    return usage_error("--timeline-filename: the timeline is libhvdrun's; give --gloo, --mpi or --nccl");
  }
  if (options.timeline_mark_cycles && options.timeline_file.empty()) {
    return usage_error("--timeline-mark-cycles: give --timeline-filename too");
  }
  for (const Tuning& setting : tuning) {
    for (const std::string& entry : options.exports) {
      if (entry.substr(0, entry.find('=')) == setting.name) {
        return usage_error("-x " + std::string(setting.name) + ": " + setting.flag +
                           " sets it too; give one of them");
      }
    }
    options.exports.push_back(std::string(setting.name) + "=" + setting.value);
  }
  result.options = std::move(options);
  return result;
}

}  // namespace hvdrun
