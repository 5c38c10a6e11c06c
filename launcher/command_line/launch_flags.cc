#include "launcher/command_line/launch_flags.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "common/env_names.h"
#include "common/error_text.h"
#include "common/horovod_variables.h"
#include "common/placement/host_spec.h"
#include "common/protocol/mpi_job_values.h"
#include "common/whole_number.h"
#include "launcher/command_line/controller_choice.h"
#include "launcher/command_line/elastic_flags.h"
#include "launcher/command_line/host_flags.h"
#include "launcher/command_line/tuning_flags.h"

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

// --start-timeout, else HOROVOD_START_TIMEOUT in hvdrun's environment (horovodrun reads it so).
Status ResolveStartTimeout(const LaunchFlags& flags, const EnvironmentLookup& getenv,
                           LaunchOptions& options) {
  if (flags.Given("--start-timeout")) {
    return ResolveGivenNumber(flags, "--start-timeout", flags.Shown("--start-timeout"), flags.start_timeout,
                              static_cast<int>(kSecondsRange.min), static_cast<int>(kSecondsRange.max),
                              &options.start_timeout_s);
  }
  const char* inherited = getenv(env::kHorovodStartTimeout);
  if (inherited == nullptr) return Status::Ok();
  StatusOr<int> seconds =
      ResolveWholeNumber(std::string(env::kHorovodStartTimeout) + " in hvdrun's environment", inherited,
                         static_cast<int>(kSecondsRange.min), static_cast<int>(kSecondsRange.max));
  if (!seconds.ok()) return seconds.status();
  options.start_timeout_s = seconds.value();
  return Status::Ok();
}

}  // namespace

std::string LaunchFlags::Shown(const std::string& flag) const {
  auto it = shown.find(flag);
  return it == shown.end() ? flag : it->second;
}

const RankSetting* LaunchFlags::RankSettingOf(const std::string& variable) const {
  for (auto setting = rank_settings.rbegin(); setting != rank_settings.rend(); ++setting) {
    if (setting->name == variable) return &*setting;
  }
  return nullptr;
}

StatusOr<int> ResolveWholeNumber(const std::string& flag, const std::string& text, int min, int max) {
  const ParsedWholeNumber number = ParseWholeNumber(text, min, max);
  if (number.out_of_range()) {
    return Status::Error(flag + ": " + PrintableText(text) + " is out of range (" + std::to_string(min) +
                         " to " + std::to_string(max) + ")");
  }
  if (!number.ok()) return Status::Error(flag + ": '" + PrintableText(text) + "' is not a whole number");
  return static_cast<int>(number.value);
}

Status ResolveNumbers(const LaunchFlags& flags, const EnvironmentLookup& getenv, LaunchOptions& options) {
  if (Status s = ResolveGivenNumber(flags, "--num-proc", flags.Shown("--num-proc"), flags.num_proc, 1,
                                    1 << 20, &options.num_proc);
      !s.ok()) {
    return s;
  }
  if (Status s = ResolveStartTimeout(flags, getenv, options); !s.ok()) return s;
  if (Status s = ResolveGivenNumber(flags, "--heartbeat-timeout", flags.Shown("--heartbeat-timeout"),
                                    flags.heartbeat_timeout, 1, 86400, &options.heartbeat_timeout_s);
      !s.ok()) {
    return s;
  }
  return ResolveGivenNumber(flags, "--ssh-port", flags.Shown("--ssh-port"), flags.ssh_port, 1, 65535,
                            &options.ssh.port);
}

Status ResolvePlainValues(const LaunchFlags& flags, LaunchOptions& options) {
  options.output_dir = flags.output_dir;
  options.working_dir = flags.working_dir;
  options.results_dir = flags.results_dir;
  options.verbose = flags.verbose;
  options.check = flags.check;
  options.dry_run = flags.dry_run;
  options.prefix_timestamp = flags.prefix_timestamp;
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
    return Status::Error(flags.Shown("--ssh-identity-file") + ": cannot read '" + options.ssh.identity_file +
                         "': " + std::strerror(errno));
  }
  return Status::Ok();
}

Status ResolveCommand(const LaunchFlags& flags, const LaunchOptions& options) {
  if (options.check && !options.command.empty()) {
    return Status::Error("--check runs no command, but '" + PrintableText(options.command.front()) +
                         "' was given");
  }
  if (options.command.empty() && !options.check) {
    return Status::Error("no command given (usage: hvdrun [options] command [args...])");
  }
  if (options.check && flags.Given("--dry-run")) {
    return Status::Error("--check: starts no rank, so runs no mpirun");
  }
  return Status::Ok();
}

StatusOr<std::vector<std::string>> ResolveExports(const std::vector<std::string>& entries, bool mpi,
                                                  const EnvironmentLookup& getenv) {
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

Status AddRankSettings(const std::vector<RankSetting>& settings, LaunchOptions& options) {
  for (const RankSetting& setting : settings) {
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
                                           const EnvironmentLookup& getenv) {
  LaunchOptions options;
  options.command = std::move(command);
  if (Status s = ResolveNumbers(flags, getenv, options); !s.ok()) return s;
  if (Status s = ResolvePlainValues(flags, options); !s.ok()) return s;
  std::vector<RankSetting> controller_settings;
  if (Status s = ResolveController(flags, getenv, options, controller_settings); !s.ok()) return s;
  if (Status s = ResolveCommand(flags, options); !s.ok()) return s;
  if (Status s = ResolveHosts(flags, getenv, options); !s.ok()) return s;
  if (Status s = ResolveElastic(flags, getenv, options); !s.ok()) return s;
  StatusOr<std::vector<std::string>> interfaces = ResolveNetworkInterfaces(flags.network_interfaces);
  if (!interfaces.ok()) return interfaces.status();
  options.network_interfaces = std::move(interfaces).value();
  StatusOr<std::vector<std::string>> exports =
      ResolveExports(flags.exports, options.backend == BackendKind::kMpi, getenv);
  if (!exports.ok()) return exports.status();
  options.exports = std::move(exports).value();
  StatusOr<std::vector<RankSetting>> tuning = ResolveTuning(flags, options.backend);
  if (!tuning.ok()) return tuning.status();
  if (Status s = ResolveTimeline(flags, getenv, options); !s.ok()) return s;
  if (Status s = AddRankSettings(controller_settings, options); !s.ok()) return s;
  if (Status s = AddRankSettings(tuning.value(), options); !s.ok()) return s;
  return options;
}

}  // namespace hvdrun
