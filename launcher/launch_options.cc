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
#include <variant>

#include "common/env_names.h"
#include "common/host/network_interfaces.h"
#include "common/placement/hostfile.h"
#include "common/shell_words.h"
#include "common/version.h"
#include "launcher/launch_flags.h"

namespace hvdrun {
namespace {

constexpr int kUsageError = 2;

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

// One flag of the table: CLI11's names (the long one last), the field of LaunchFlags it fills, and
// its help. Flags taking a list (repeatable) fill a vector; switches fill a bool.
struct Flag {
  const char* names;
  std::variant<std::string LaunchFlags::*, bool LaunchFlags::*, std::vector<std::string> LaunchFlags::*>
      field;
  const char* help;
};

// Every flag of hvdrun, in --help's order. LaunchFlags' resolvers (launch_flags.h) check and apply them.
const Flag kFlags[] = {
    {"--num-proc", &LaunchFlags::num_proc,
     "Number of processes (ranks); written -np as in horovodrun. Default: every slot of the hosts"},
    {"-H,--hosts", &LaunchFlags::hosts,
     "Hosts and their slots: [user@]host[:slots],... (IPv6 as [addr]:slots; user@ overrides --ssh-user for "
     "that host, and is an error with --launcher slurm). Default: localhost with -np slots"},
    {"--hostfile", &LaunchFlags::hostfile, "File of 'host slots=N' lines (mpirun/horovodrun format)"},
    {"--launcher", &LaunchFlags::launcher,
     "How each host's agent starts: ssh (a child process here, SSH elsewhere), slurm (srun inside a Slurm "
     "allocation; hosts, slots and -np from the allocation unless -H/--hostfile or -np say otherwise) or "
     "local (all on this machine). Default: slurm inside an allocation (SLURM_JOB_ID set) without "
     "-H/--hostfile, else ssh"},
    {"--output-filename", &LaunchFlags::output_dir,
     "Also write each rank's output to DIR/rank.N/stdout and DIR/rank.N/stderr"},
    {"--start-timeout", &LaunchFlags::start_timeout,
     "Seconds to wait for every host's agent to start (default 30)"},
    {"--verbose", &LaunchFlags::verbose, "Print what hvdrun does: hosts, agents, ranks"},
    {"--heartbeat-timeout", &LaunchFlags::heartbeat_timeout,
     "Seconds of silence after which an agent, or the launcher, counts as lost (default 30)"},
    {"--ssh-user", &LaunchFlags::ssh_user,
     "User on hosts that are not this machine (default: ~/.ssh/config's, else your own)"},
    {"-p,--ssh-port", &LaunchFlags::ssh_port, "SSH port of the hosts (default: ~/.ssh/config's, else 22)"},
    {"-i,--ssh-identity-file", &LaunchFlags::ssh_identity_file,
     "Private key to log in with, after the ssh-agent's keys and before ~/.ssh/id_*"},
    {"--ssh-known-hosts", &LaunchFlags::ssh_known_hosts,
     "known_hosts file to check host keys against (default ~/.ssh/known_hosts)"},
    {"--ssh-accept-new-host-keys", &LaunchFlags::ssh_accept_new_host_keys,
     "Trust hosts missing from known_hosts and record their keys (a changed key is always refused)"},
    {"--agent-path", &LaunchFlags::agent_path,
     "hvdrun-agent on the remote hosts (default: hvdrun-agent in their PATH, else the path of this "
     "machine's hvdrun-agent)"},
    {"--cwd", &LaunchFlags::working_dir, "Working directory of the ranks on every host (default: hvdrun's)"},
    {"--gloo", &LaunchFlags::gloo,
     "Ranks use Gloo (TCP) for collectives; hvdrun runs the job's rendezvous service"},
    {"--mpi", &LaunchFlags::mpi,
     "Run the ranks with Open MPI's mpirun, as horovodrun --mpi does; they use MPI for collectives, and "
     "hvdrun still collects their output, exit statuses and reports"},
    {"--nccl", &LaunchFlags::nccl,
     "Ranks use NCCL (GPUs) for collectives; hvdrun runs the job's rendezvous service"},
    {"--dry-run", &LaunchFlags::dry_run,
     "With --mpi: print the mpirun command hvdrun would run; start nothing"},
    {"--mpi-args", &LaunchFlags::mpi_args,
     "With --mpi: more mpirun arguments, as one string split into words as a shell would (quotes '...' "
     "\"...\" and \\ work; nothing is expanded)"},
    {"--results", &LaunchFlags::results_dir,
     "Write plan.json, ranks/rank-N.json (each rank's report) and summary.json to DIR"},
    {"--check", &LaunchFlags::check,
     "Check the hosts: start each one's agent, print its facts (OS, kernel, CPUs, memory, NICs, GPUs, "
     "MPI/Gloo/NCCL/CUDA versions), start no rank; exit 0 when every host answers with the same versions"},
    {"--network-interface,--network-interfaces", &LaunchFlags::network_interfaces,
     "Network interface for the job's traffic (rendezvous, MASTER_ADDR, Gloo, NCCL, MPI); repeatable or "
     "comma-separated: each host uses the first it has. Default: the interface the hosts reach this "
     "machine by"},
    {"-x", &LaunchFlags::exports, "Export NAME (hvdrun's value) or NAME=VALUE to every rank; repeatable"},
    {"--fusion-threshold-mb", &LaunchFlags::fusion_threshold_mb,
     "libhvdrun's tensor fusion: the largest fused buffer, in MiB; 0 turns fusion off (default 128; "
     "HOROVOD_FUSION_THRESHOLD for the ranks)"},
    {"--cycle-time-ms", &LaunchFlags::cycle_time_ms,
     "libhvdrun's negotiation cycle, in ms (default 1; HOROVOD_CYCLE_TIME for the ranks)"},
    {"--cache-capacity", &LaunchFlags::cache_capacity,
     "libhvdrun's response cache, in entries; 0 turns it off (default 1024; HOROVOD_CACHE_CAPACITY)"},
    {"--compression", &LaunchFlags::compression,
     "libhvdrun's gradient compression: float32 sums and averages travel as none (default), fp16, bf16, "
     "fp8 (E4M3; also fp8-e4m3) or fp8-e5m2 (HVDRUN_COMPRESSION for the ranks)"},
    {"--fp8-scaling", &LaunchFlags::fp8_scaling,
     "With fp8 compression: scale blocks of values by a power of two shared by every rank, so that small "
     "gradients survive (on|off; default on)"},
    {"--fp8-safe-cast", &LaunchFlags::fp8_safe_cast,
     "With fp8 compression: values beyond fp8's range saturate and small ones keep subnormal precision; "
     "off, a naive cast makes them NaN and zero (on|off; default on)"},
    {"--fp8-float32-sums", &LaunchFlags::fp8_float32_sums,
     "With fp8 compression: sum every rank's values in float32, never in fp8 (on|off; default on)"},
    {"--error-feedback", &LaunchFlags::error_feedback,
     "With fp8 compression: add what encoding lost to the same tensor's next values (on|off; default on)"},
    {"--shared-memory", &LaunchFlags::shared_memory,
     "libhvdrun's allreduces of a job whose ranks are all on one host go through its shared memory, not "
     "the backend (on|off; default on; HVDRUN_SHM for the ranks)"},
    {"--hierarchical-allreduce", &LaunchFlags::hierarchical_allreduce,
     "With --gloo, on several hosts with as many ranks each (at least 2): reduce inside each host through "
     "shared memory, then across hosts over Gloo, one slice per local rank "
     "(HOROVOD_HIERARCHICAL_ALLREDUCE=1; "
     "the default where it applies)"},
    {"--no-hierarchical-allreduce", &LaunchFlags::no_hierarchical_allreduce,
     "Reduce across hosts in one flat Gloo ring over every rank (HOROVOD_HIERARCHICAL_ALLREDUCE=0)"},
    {"--timeline-filename", &LaunchFlags::timeline_filename,
     "Record every rank's libhvdrun timeline and merge them into FILE, a Chrome trace for Perfetto or "
     "chrome://tracing, one process per rank (also: HOROVOD_TIMELINE)"},
    {"--timeline-mark-cycles", &LaunchFlags::timeline_mark_cycles,
     "With --timeline-filename: mark each negotiation cycle in the timeline"},
};

// The flag's long name, as LaunchFlags::given holds it: the last of its names.
std::string LongName(const Flag& flag) {
  std::string names = flag.names;
  return names.substr(names.rfind(',') + 1);
}

CLI::App& DeclareFlags(CLI::App& app, LaunchFlags& flags) {
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
  for (const Flag& flag : kFlags) {
    if (auto* text = std::get_if<std::string LaunchFlags::*>(&flag.field)) {
      app.add_option(flag.names, flags.*(*text), flag.help);
    } else if (auto* list = std::get_if<std::vector<std::string> LaunchFlags::*>(&flag.field)) {
      app.add_option(flag.names, flags.*(*list), flag.help)->allow_extra_args(false);
    } else {
      app.add_flag(flag.names, flags.*std::get<bool LaunchFlags::*>(flag.field), flag.help);
    }
  }
  return app;
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
  auto usage_error = [&](const std::string& message) {
    result.exit_code = kUsageError;
    result.error = message;
    return result;
  };
  LaunchFlags flags;
  CLI::App app("hvdrun: run a distributed-training job over hosts, one process per rank.", "hvdrun");
  DeclareFlags(app, flags);

  std::vector<std::string> args(argv + 1, argv + argc);
  StatusOr<size_t> command_start = SplitOptions(app, args);
  if (!command_start.ok()) return usage_error(command_start.status().message());
  std::vector<std::string> option_args(args.begin(),
                                       args.begin() + static_cast<std::ptrdiff_t>(command_start.value()));
  size_t first = command_start.value();
  if (first < args.size() && args[first] == "--") ++first;
  std::vector<std::string> command(args.begin() + static_cast<std::ptrdiff_t>(first), args.end());

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
    return usage_error(error.what());
  }
  for (const Flag& flag : kFlags) {
    if (app.count(LongName(flag)) > 0) flags.given.insert(LongName(flag));
  }

  StatusOr<LaunchOptions> options = ResolveLaunchFlags(flags, std::move(command), getenv);
  if (!options.ok()) return usage_error(options.status().message());
  result.options = std::move(options).value();
  return result;
}

}  // namespace hvdrun
