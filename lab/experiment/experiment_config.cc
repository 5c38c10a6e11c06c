#include "lab/experiment/experiment_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/error_text.h"
#include "hvdrun/types.h"
#include "lab/experiment/experiment_limits.h"
#include "lab/experiment/experiment_parser.h"
#include "lab/whole_file.h"

namespace hvdrun::lab {
namespace {

// The `compression` axis's name for fp8 with every safeguard off.
constexpr const char* kNaiveFp8 = "fp8-naive";

}  // namespace

bool IsPlacementAxis(std::string_view name) {
  return name == "backend" || name == "np" || name == "processes_per_server" || name == "servers";
}

std::string SourcePosition::Prefix() const {
  if (line <= 0) return file + ": ";
  return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
}

std::optional<FusionSetting> ParseFusionSetting(std::string_view text) {
  if (text == "off") return FusionSetting{0, 1};
  if (text == "on") return FusionSetting{128, 1};
  if (text == "horovod-0.19" || text == "horovod-0.20") return FusionSetting{64, 5};
  if (text == "autotune") return FusionSetting{0, 0, true};
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  // hvdrun's --fusion-threshold-mb takes whole MiB, --cycle-time-ms any number of ms.
  std::optional<double> mb = experiment_file::ParseNumber(std::string(text.substr(0, slash)));
  std::optional<double> ms = experiment_file::ParseNumber(std::string(text.substr(slash + 1)));
  if (!mb || !ms || *mb < 0 || *mb > (1 << 20) || *mb != std::floor(*mb) || *ms < 0 || *ms > 60000) {
    return std::nullopt;
  }
  return FusionSetting{*mb, *ms};
}

std::optional<std::vector<std::string>> CompressionSettingArguments(std::string_view text) {
  if (text == kNaiveFp8) {
    return std::vector<std::string>{"--compression",    "fp8", "--fp8-scaling",      "off",
                                    "--fp8-safe-cast",  "off", "--fp8-float32-sums", "off",
                                    "--error-feedback", "off"};
  }
  if (!ParseCompressionFormat(text)) return std::nullopt;
  return std::vector<std::string>{"--compression", std::string(text)};
}

std::string CompressionSettingNames() {
  std::string names;
  for (CompressionFormat format :
       {CompressionFormat::kNone, CompressionFormat::kFloat16, CompressionFormat::kBFloat16,
        CompressionFormat::kFloat8E4M3, CompressionFormat::kFloat8E5M2}) {
    names += std::string(CompressionFormatName(format)) + ", ";
  }
  return names + "fp8 (= fp8-e4m3) or " + kNaiveFp8;
}

StatusOr<ExperimentConfig> ParseExperiment(std::string_view text, const std::string& path) {
  StatusOr<ExperimentConfig> config = experiment_file::ExperimentParser(path).Parse(text);
  // Errors quote the file's keys and values; a control character in one stays out of the line.
  if (!config.ok()) return Status::Error(OneLineText(config.status().message()));
  config->text = std::string(text);
  return config;
}

StatusOr<ExperimentConfig> LoadExperiment(const std::string& path) {
  StatusOr<std::string> text = ReadWholeFile(path, kMaxExperimentFileBytes, "experiment");
  if (!text.ok()) return text.status();
  return ParseExperiment(text.value(), path);
}

std::vector<std::string> HvdrunOptionArguments(const ExperimentConfig& config) {
  std::vector<std::string> arguments;
  for (const HvdrunOption& option : config.hvdrun_options) {
    arguments.insert(arguments.end(), option.arguments.begin(), option.arguments.end());
  }
  return arguments;
}

const Axis* FindAxis(const ExperimentConfig& config, std::string_view name) {
  auto it =
      std::find_if(config.axes.begin(), config.axes.end(), [&](const Axis& a) { return a.name == name; });
  return it == config.axes.end() ? nullptr : &*it;
}

}  // namespace hvdrun::lab
