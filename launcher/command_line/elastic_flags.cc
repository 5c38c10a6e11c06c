#include "launcher/command_line/elastic_flags.h"

#include <sstream>
#include <string>
#include <vector>

#include "common/env_names.h"
#include "common/error_text.h"
#include "common/horovod_variables.h"

namespace hvdrun {
namespace {

constexpr int kMaxProcesses = 1 << 20;
// horovodrun's bounds of the cooldown range (runner/elastic/discovery.py).
constexpr int kCooldownLowest = 1;
constexpr int kCooldownHighest = 3600;

// The flags that only mean something in an elastic job.
const std::vector<const char*>& ElasticOnlyFlags() {
  static const std::vector<const char*> flags = {"--max-num-proc", "--slots-per-host", "--elastic-timeout",
                                                 "--reset-limit", "--blacklist-cooldown-range"};
  return flags;
}

Status GivenNumber(const LaunchFlags& flags, const char* flag, const std::string& text, int min, int max,
                   int* target) {
  if (!flags.Given(flag)) return Status::Ok();
  StatusOr<int> number = ResolveWholeNumber(flags.Shown(flag), text, min, max);
  if (!number.ok()) return number.status();
  *target = number.value();
  return Status::Ok();
}

StatusOr<CooldownRange> ResolveCooldown(const LaunchFlags& flags) {
  const std::string shown = flags.Shown("--blacklist-cooldown-range");
  std::istringstream words(flags.blacklist_cooldown_range);
  std::string min_text, max_text;
  words >> min_text >> max_text;
  StatusOr<int> min = ResolveWholeNumber(shown + " MIN", min_text, kCooldownLowest, kCooldownHighest);
  if (!min.ok()) return min.status();
  StatusOr<int> max = ResolveWholeNumber(shown + " MAX", max_text, kCooldownLowest, kCooldownHighest);
  if (!max.ok()) return max.status();
  if (min.value() > max.value()) {
    return Status::Error(shown + " " + min_text + " " + max_text + ": MIN is above MAX");
  }
  return CooldownRange{min.value(), max.value()};
}

Status ResolveTimeout(const LaunchFlags& flags, const EnvironmentLookup& getenv, ElasticOptions& elastic) {
  const int lowest = static_cast<int>(kSecondsRange.min);
  const int highest = static_cast<int>(kSecondsRange.max);
  if (flags.Given("--elastic-timeout")) {
    return GivenNumber(flags, "--elastic-timeout", flags.elastic_timeout, lowest, highest,
                       &elastic.timeout_s);
  }
  const char* inherited = getenv(env::kHorovodElasticTimeout);
  if (inherited == nullptr) return Status::Ok();
  StatusOr<int> seconds = ResolveWholeNumber(
      std::string(env::kHorovodElasticTimeout) + " in hvdrun's environment", inherited, lowest, highest);
  if (!seconds.ok()) return seconds.status();
  elastic.timeout_s = seconds.value();
  return Status::Ok();
}

// The numbers, each in its range, then their order: min-np <= -np <= max-np.
Status ResolveCounts(const LaunchFlags& flags, const LaunchOptions& options, ElasticOptions& elastic) {
  elastic.min_np = options.num_proc;
  if (Status s = GivenNumber(flags, "--min-num-proc", flags.min_np, 1, kMaxProcesses, &elastic.min_np);
      !s.ok()) {
    return s;
  }
  if (Status s = GivenNumber(flags, "--max-num-proc", flags.max_np, 1, kMaxProcesses, &elastic.max_np);
      !s.ok()) {
    return s;
  }
  if (Status s = GivenNumber(flags, "--slots-per-host", flags.slots_per_host, 1, kMaxProcesses,
                             &elastic.slots_per_host);
      !s.ok()) {
    return s;
  }
  if (flags.Given("--reset-limit")) {
    int limit = 0;
    if (Status s = GivenNumber(flags, "--reset-limit", flags.reset_limit, 0, kMaxProcesses, &limit);
        !s.ok()) {
      return s;
    }
    elastic.reset_limit = limit;
  }
  const std::string np = "-np " + std::to_string(options.num_proc);
  if (elastic.min_np > options.num_proc) {
    return Status::Error(flags.Shown("--min-num-proc") + " " + std::to_string(elastic.min_np) +
                         ": more than " + np + " (the ranks an elastic job starts with)");
  }
  if (elastic.max_np != 0 && elastic.max_np < options.num_proc) {
    return Status::Error(flags.Shown("--max-num-proc") + " " + std::to_string(elastic.max_np) +
                         ": fewer than " + np + " (the ranks an elastic job starts with)");
  }
  return Status::Ok();
}

}  // namespace

Status ResolveElastic(const LaunchFlags& flags, const EnvironmentLookup& getenv, LaunchOptions& options) {
  const bool script = flags.Given("--host-discovery-script");
  if (!flags.Given("--min-num-proc") && !script) {
    for (const char* flag : ElasticOnlyFlags()) {
      if (flags.Given(flag)) {
        return Status::Error(flags.Shown(flag) +
                             ": only for an elastic job; give --min-np or --host-discovery-script too");
      }
    }
    return Status::Ok();
  }
  const std::string elastic_flag = flags.Shown(script ? "--host-discovery-script" : "--min-num-proc");
  if (!options.backend || *options.backend == BackendKind::kMpi) {
    std::string controller = options.backend ? "mpi" : "none";
    return Status::Error(elastic_flag +
                         ": an elastic job needs the Gloo controller (the ranks re-form "
                         "through hvdrun's rendezvous service), but the controller is " +
                         controller + " (" + options.backend_reason + ")");
  }
  ElasticOptions elastic;
  if (script) {
    if (flags.host_discovery_script.empty()) return Status::Error(elastic_flag + ": an empty file name");
    if (flags.Given("--hosts") || flags.Given("--hostfile")) {
      return Status::Error(elastic_flag + ": the hosts come from the script; leave out -H and --hostfile");
    }
    elastic.discovery_script = flags.host_discovery_script;
    if (options.agent_start == AgentStart::kSlurm && options.slurm) {
      for (const HostSlots& node : options.slurm->nodes) elastic.allowed.hosts.push_back(node.host);
      elastic.allowed.where = "Slurm job " + options.slurm->job_id + " (" + env::kSlurmJobNodeList + "='" +
                              options.slurm->node_list + "')";
    }
  }
  if (Status s = ResolveCounts(flags, options, elastic); !s.ok()) return s;
  if (Status s = ResolveTimeout(flags, getenv, elastic); !s.ok()) return s;
  if (flags.Given("--blacklist-cooldown-range")) {
    StatusOr<CooldownRange> cooldown = ResolveCooldown(flags);
    if (!cooldown.ok()) return cooldown.status();
    elastic.cooldown = cooldown.value();
  }
  options.elastic = elastic;
  return Status::Ok();
}

}  // namespace hvdrun
