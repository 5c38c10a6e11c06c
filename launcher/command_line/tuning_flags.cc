#include "launcher/command_line/tuning_flags.h"

#include <string>
#include <utility>

#include "common/env_names.h"

namespace hvdrun {
namespace {

StatusOr<RankSetting> ResolveCompression(const std::string& text, const std::optional<BackendKind>& backend) {
  const std::optional<CompressionFormat> format = ParseCompressionFormat(text);
  if (!format) {
    return Status::Error("--compression: '" + text +
                         "' is not a compression (none, fp16, bf16, fp8, fp8-e4m3, fp8-e5m2)");
  }
  if (backend == BackendKind::kNccl && *format != CompressionFormat::kNone) {
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
  if (backend == BackendKind::kNccl) {
    return Status::Error("--shared-memory: libhvdrun's path for host memory; give --gloo or --mpi");
  }
  return RankSetting{"--shared-memory", env::kSharedMemory, text == "on" ? "1" : "0"};
}

}  // namespace

StatusOr<std::vector<RankSetting>> ResolveTuning(const LaunchFlags& flags,
                                                 const std::optional<BackendKind>& backend) {
  std::vector<RankSetting> tuning;
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
  const RankSetting* hierarchical = flags.RankSettingOf(env::kHorovodHierarchicalAllreduce);
  if (hierarchical != nullptr && hierarchical->value == "1" && flags.shared_memory == "off") {
    return Status::Error(
        hierarchical->flag +
        ": reduces inside each host through shared memory, which --shared-memory off turns off");
  }
  tuning.insert(tuning.end(), flags.rank_settings.begin(), flags.rank_settings.end());
  return tuning;
}

Status ResolveTimeline(const LaunchFlags& flags, const EnvironmentLookup& getenv, LaunchOptions& options) {
  // HOROVOD_TIMELINE names the merged file, as horovodrun's --timeline-filename sets it: given
  // with -x it is taken from the exports; in hvdrun's own environment it applies when neither is
  // (and ranks run: not with --check).
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
    return Status::Error(flags.Shown("--timeline-filename") + ": an empty file name");
  }
  const char* inherited = getenv(env::kHorovodTimeline);
  if (options.timeline_file.empty() && !options.check && inherited != nullptr && *inherited != '\0') {
    options.timeline_file = inherited;
  }
  if (options.timeline_mark_cycles && options.timeline_file.empty()) {
    return Status::Error(flags.Shown("--timeline-mark-cycles") + ": give --timeline-filename too");
  }
  return Status::Ok();
}

}  // namespace hvdrun
