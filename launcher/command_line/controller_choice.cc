#include "launcher/command_line/controller_choice.h"

#include <optional>
#include <utility>

#include "common/env_names.h"
#include "common/error_text.h"
#include "common/horovod_variables.h"
#include "common/shell_words.h"

namespace hvdrun {
namespace {

// A variable's value for the ranks, and where it comes from.
struct RankValue {
  std::string value;
  std::string where;      // "-x HOROVOD_CONTROLLER=mpi", "HOROVOD_CONTROLLER=mpi in hvdrun's environment"
  bool exported = false;  // given with -x
};

// `name` as the ranks would see it: the last -x that gives it (a bare NAME: hvdrun's value), else
// hvdrun's environment.
std::optional<RankValue> FindRankValue(const LaunchFlags& flags, const EnvironmentLookup& getenv,
                                       const std::string& name) {
  for (auto entry = flags.exports.rbegin(); entry != flags.exports.rend(); ++entry) {
    const size_t equals = entry->find('=');
    if (entry->substr(0, equals) != name) continue;
    const char* inherited = equals == std::string::npos ? getenv(name.c_str()) : nullptr;
    if (equals == std::string::npos && inherited == nullptr) continue;  // ResolveExports refuses it
    std::string value = equals == std::string::npos ? inherited : entry->substr(equals + 1);
    return RankValue{value, "-x " + name + "=" + PrintableText(value), true};
  }
  const char* inherited = getenv(name.c_str());
  if (inherited == nullptr) return std::nullopt;
  return RankValue{inherited, name + "=" + PrintableText(inherited) + " in hvdrun's environment", false};
}

StatusOr<std::vector<std::string>> SplitMpirunWords(const LaunchFlags& flags, const std::string& flag,
                                                    const std::string& text) {
  StatusOr<std::vector<std::string>> words = SplitShellWords(text);
  if (!words.ok()) return Status::Error(flags.Shown(flag) + ": " + words.status().message());
  return words;
}

// In a gloo job, Horovod's two controller variables say gloo for the ranks, as horovodrun --gloo sets
// them; a -x that says otherwise is an error, a value from hvdrun's environment is replaced.
Status SetGlooControllerVariables(const LaunchFlags& flags, const EnvironmentLookup& getenv,
                                  LaunchOptions& options, std::vector<RankSetting>& settings) {
  for (const char* name : {env::kHorovodController, env::kHorovodCpuOperations}) {
    std::optional<RankValue> found = FindRankValue(flags, getenv, name);
    const bool says_gloo = found && ParseHostLibrary(found->value) == HostLibrary::kGloo;
    if (found && found->exported) {
      if (says_gloo) continue;
      return Status::Error(found->where + ": the job's controller is gloo (" + options.backend_reason +
                           "); give one of them");
    }
    if (found && !says_gloo) {
      options.notices.push_back(found->where + ": the ranks get " + name + "=gloo, the job's controller (" +
                                options.backend_reason + "), as horovodrun --gloo gives them");
    }
    settings.push_back(RankSetting{options.backend_reason, name, "gloo"});
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ControllerChoice> ChooseController(const LaunchFlags& flags, const EnvironmentLookup& getenv) {
  for (const auto& [flag, backend] :
       {std::pair{"--gloo", BackendKind::kGloo}, std::pair{"--mpi", BackendKind::kMpi},
        std::pair{"--nccl", BackendKind::kNccl}}) {
    if (flags.Given(flag)) return ControllerChoice{backend, flags.Shown(flag)};
  }
  for (const char* name : {env::kHorovodController, env::kHorovodCpuOperations}) {
    std::optional<RankValue> found = FindRankValue(flags, getenv, name);
    if (!found) continue;
    const std::optional<HostLibrary> library = ParseHostLibrary(found->value);
    if (library == HostLibrary::kCcl) {
      return Status::Error(found->where + ": oneCCL is not a library hvdrun has; its controllers are " +
                           kHostLibraryForm);
    }
    if (!library) {
      return Status::Error(found->where + ": not a controller hvdrun has (" + kHostLibraryForm + ")");
    }
    return ControllerChoice{*library == HostLibrary::kGloo ? BackendKind::kGloo : BackendKind::kMpi,
                            found->where};
  }
  for (const char* flag : {"--mpi-args", "--binding-args"}) {
    if (flags.Given(flag)) {
      return ControllerChoice{BackendKind::kMpi, flags.Shown(flag) + ", which are mpirun's"};
    }
  }
  return ControllerChoice{
      BackendKind::kGloo,
      "hvdrun's default: no --gloo, --mpi, --nccl, HOROVOD_CONTROLLER or --mpi-args given"};
}

Status ResolveController(const LaunchFlags& flags, const EnvironmentLookup& getenv, LaunchOptions& options,
                         std::vector<RankSetting>& settings) {
  if (flags.jsrun) {
    return Status::Error(
        "--jsrun: IBM LSF's jsrun is not a launcher hvdrun has; inside an LSF allocation give its hosts with "
        "-H or --hostfile, and --mpi to start the ranks with mpirun");
  }
  StatusOr<ControllerChoice> choice = ChooseController(flags, getenv);
  if (!choice.ok()) return choice.status();
  options.backend = choice.value().backend;
  options.backend_reason = choice.value().reason;
  const bool mpi = options.backend == BackendKind::kMpi;
  if (flags.dry_run && !mpi) {
    return Status::Error(flags.Shown("--dry-run") +
                         ": only with --mpi (it prints the mpirun command hvdrun would run)");
  }
  for (const auto& [flag, text] :
       {std::pair{"--mpi-args", &flags.mpi_args}, std::pair{"--binding-args", &flags.binding_args}}) {
    if (!flags.Given(flag)) continue;
    if (!mpi) {
      return Status::Error(flags.Shown(flag) +
                           ": only with --mpi (they are mpirun's arguments; the controller is " +
                           std::string(BackendName(*options.backend)) + ": " + options.backend_reason + ")");
    }
    StatusOr<std::vector<std::string>> words = SplitMpirunWords(flags, flag, *text);
    if (!words.ok()) return words.status();
    if (std::string(flag) == "--mpi-args") {
      options.mpi_args = std::move(words).value();
    } else {
      options.binding_args = std::move(words).value();
    }
  }
  if (options.backend == BackendKind::kGloo && !options.check) {
    return SetGlooControllerVariables(flags, getenv, options, settings);
  }
  return Status::Ok();
}

}  // namespace hvdrun
