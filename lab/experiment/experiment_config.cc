#include "lab/experiment/experiment_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "common/whole_number.h"
#include "lab/experiment/experiment_parser.h"

namespace hvdrun::lab {
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
  if (text == "fp8-naive") {
    return std::vector<std::string>{"--compression",    "fp8", "--fp8-scaling",      "off",
                                    "--fp8-safe-cast",  "off", "--fp8-float32-sums", "off",
                                    "--error-feedback", "off"};
  }
  for (const char* format : {"none", "fp16", "bf16", "fp8", "fp8-e4m3", "fp8-e5m2"}) {
    if (text == format) return std::vector<std::string>{"--compression", std::string(text)};
  }
  return std::nullopt;
}

StatusOr<ExperimentConfig> ParseExperiment(std::string_view text, const std::string& path) {
  return experiment_file::ExperimentParser(path).Parse(text);
}

StatusOr<ExperimentConfig> LoadExperiment(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::error_code error;
  if (!in || std::filesystem::is_directory(path, error)) {
    std::string reason = std::filesystem::is_directory(path, error) ? "Is a directory" : std::strerror(errno);
    return Status::Error("cannot read experiment '" + path + "': " + reason);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseExperiment(text.str(), path);
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
