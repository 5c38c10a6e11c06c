#include "launcher/command_line/command_line.h"

#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "common/exit_codes.h"
#include "common/version.h"
#include "launcher/command_line/argument_scanner.h"
#include "launcher/command_line/check_build.h"
#include "launcher/command_line/config_file.h"
#include "launcher/command_line/launch_flags.h"
#include "launcher/command_line/option_table.h"

namespace hvdrun {
namespace {

// Fills LaunchFlags from the command line's options, then from the config file's where the command
// line left a setting alone; two rows of one setting on the command line are an error.
class FlagCollector {
 public:
  Status FromCommandLine(const ScannedOption& scanned) {
    const OptionRow& row = OptionTable()[scanned.option];
    const std::string setting = SettingOf(row);
    auto [given, first] = given_settings_.try_emplace(setting, scanned.option, scanned.typed);
    if (!first && given->second.first != scanned.option) {
      return Status::Error(given->second.second + " and " + scanned.typed + ": give one of them");
    }
    return ApplyOption(row, scanned.typed, scanned.value, flags_);
  }

  Status FromConfig(const ConfigSetting& setting) {
    const OptionRow& row = OptionTable()[setting.row];
    if (given_settings_.count(SettingOf(row)) > 0) return Status::Ok();  // the command line wins
    return ApplyOption(row, setting.origin, setting.value, flags_);
  }

  LaunchFlags& flags() { return flags_; }

 private:
  LaunchFlags flags_;
  // Each setting given on the command line: its row, and the option as typed.
  std::map<std::string, std::pair<size_t, std::string>> given_settings_;
};

// The flags of the command line and of --config-file.
StatusOr<LaunchFlags> CollectFlags(const std::vector<ScannedOption>& scanned) {
  FlagCollector collector;
  for (const ScannedOption& option : scanned) {
    if (Status status = collector.FromCommandLine(option); !status.ok()) return status;
  }
  LaunchFlags& flags = collector.flags();
  if (flags.help || flags.version || !flags.Given("--config-file")) return std::move(flags);
  StatusOr<std::vector<ConfigSetting>> settings = ReadConfigFile(flags.config_file);
  if (!settings.ok()) return settings.status();
  for (const ConfigSetting& setting : settings.value()) {
    if (Status status = collector.FromConfig(setting); !status.ok()) return status;
  }
  return std::move(collector.flags());
}

}  // namespace

ParsedCommandLine ParseCommandLine(int argc, const char* const* argv, const EnvironmentLookup& getenv,
                                   const std::string& hvdrun_path) {
  ParsedCommandLine result;
  auto usage_error = [&](const Status& status) {
    result.exit_code = kExitUsage;
    result.error = status.message();
    return result;
  };
  const std::vector<std::string> args(argv + 1, argv + argc);
  StatusOr<ScannedCommandLine> scanned = ScanArguments(args, OptionTableSyntax());
  if (!scanned.ok()) return usage_error(scanned.status());
  StatusOr<LaunchFlags> flags = CollectFlags(scanned.value().options);
  if (!flags.ok()) return usage_error(flags.status());
  if (flags.value().help) {
    std::fputs(HelpText().c_str(), stdout);
    return result;
  }
  if (flags.value().version) {
    std::printf("hvdrun %s\n", kVersion);
    return result;
  }
  if (flags.value().check_build) {
    const BuildFacts facts = FindBuildFacts(hvdrun_path);
    if (flags.value().verbose) {
      std::fprintf(stderr, "hvdrun: backend modules in %s\n", facts.modules_dir.c_str());
    }
    std::fputs(FormatCheckBuild(facts).c_str(), stdout);
    return result;
  }
  StatusOr<LaunchOptions> options =
      ResolveLaunchFlags(flags.value(), std::move(scanned.value().command), getenv);
  if (!options.ok()) return usage_error(options.status());
  result.options = std::move(options).value();
  return result;
}

}  // namespace hvdrun
