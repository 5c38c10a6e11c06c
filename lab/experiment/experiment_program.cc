#include "lab/experiment/experiment_parser.h"

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

#include "common/host/network_interfaces.h"
#include "common/placement/hostfile.h"
#include "common/whole_number.h"

namespace hvdrun::lab::experiment_file {

Status ExperimentParser::ParseArgs(const YAML::Node& node) {
  if (!node.IsSequence()) {
    return Status::Error(Where(node).Prefix() +
                         "args must be a list of arguments, as in [--steps, 20], not " + Describe(node));
  }
  for (const YAML::Node& arg : node) {
    StatusOr<std::string> text = ScalarText(arg, "each entry of args");
    if (!text.ok()) return text.status();
    config_.args.push_back(text.value());
  }
  return Status::Ok();
}

Status ExperimentParser::ParseEnv(const YAML::Node& node) {
  if (!node.IsMap()) return Status::Error(Where(node).Prefix() + "env must be a map of NAME: value");
  StatusOr<std::vector<std::pair<YAML::Node, YAML::Node>>> entries = OrderedEntries(node, "env");
  if (!entries.ok()) return entries.status();
  for (const auto& [key, value] : entries.value()) {
    if (!IsVariableName(key.Scalar())) {
      return Status::Error(Where(key).Prefix() + "env: '" + key.Scalar() + "' is not a variable name");
    }
    StatusOr<std::string> text = ScalarText(value, "env " + key.Scalar());
    if (!text.ok()) return text.status();
    config_.env.emplace_back(key.Scalar(), text.value());
  }
  return Status::Ok();
}

Status ExperimentParser::ParseFigures(const YAML::Node& node) {
  if (!node.IsMap()) {
    return Status::Error(Where(node).Prefix() + "figures must be a map (step_time: ..., ...)");
  }
  std::map<std::string, std::pair<YAML::Node, YAML::Node>> keys;
  if (Status status = CollectKeys(node, "figures", FigureKeys(), keys); !status.ok()) return status;
  for (const auto& [key, nodes] : keys) {
    if (key == "step_time_scale") {
      StatusOr<double> scale = PositiveNumber(nodes.second, "figures.step_time_scale", kMaxStepTimeScale);
      if (!scale.ok()) return scale.status();
      config_.figures.step_time_scale = scale.value();
      continue;
    }
    StatusOr<std::string> text = ScalarText(nodes.second, "figures." + key);
    if (!text.ok()) return text.status();
    if (text.value().empty()) {
      return Status::Error(Where(nodes.second).Prefix() + "figures." + key + " is empty");
    }
    if (key == "step_time") config_.figures.step_time = text.value();
    if (key == "throughput") config_.figures.throughput = text.value();
    if (key == "throughput_unit") config_.figures.throughput_unit = text.value();
    if (key == "accuracy") config_.figures.accuracy = text.value();
    if (key == "training_time") config_.figures.training_time = text.value();
  }
  return Status::Ok();
}

std::string ExperimentParser::AbsolutePath(const std::string& path) const {
  std::filesystem::path resolved(path);
  const char* home = std::getenv("HOME");
  if (path.rfind("~/", 0) == 0 && home != nullptr) {
    resolved = std::filesystem::path(home) / path.substr(2);
  } else if (resolved.is_relative()) {
    resolved = Relative(path);
  }
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(resolved, error);
  return (error ? resolved : absolute).lexically_normal().string();
}

Status ExperimentParser::ParseHvdrunOptions(const YAML::Node& node) {
  if (!node.IsMap()) {
    return Status::Error(Where(node).Prefix() +
                         "hvdrun must be a map of hvdrun's options (ssh_user: ..., ...), not " +
                         Describe(node));
  }
  std::vector<std::string> allowed;
  for (const HvdrunOptionKey& option : kHvdrunOptionKeys) allowed.emplace_back(option.key);
  std::map<std::string, std::pair<YAML::Node, YAML::Node>> keys;
  if (Status status = CollectKeys(node, "hvdrun", allowed, keys); !status.ok()) return status;
  for (const HvdrunOptionKey& option : kHvdrunOptionKeys) {
    auto it = keys.find(option.key);
    if (it == keys.end()) continue;
    const YAML::Node& value = it->second.second;
    const std::string what = std::string("hvdrun.") + option.key;
    HvdrunOption parsed;
    parsed.key = option.key;
    parsed.position = Where(value);
    std::vector<YAML::Node> nodes;
    if (option.kind == HvdrunOptionKind::kInterfaces && value.IsSequence()) {
      if (value.size() == 0) return Status::Error(parsed.position.Prefix() + what + ": the list is empty");
      for (const YAML::Node& entry : value) nodes.push_back(entry);
    } else {
      nodes.push_back(value);
    }
    for (const YAML::Node& entry : nodes) {
      StatusOr<std::string> text = HvdrunOptionValue(option, entry);
      if (!text.ok()) return text.status();
      const std::string& word = text.value();
      parsed.values.push_back(word);
      if (option.kind == HvdrunOptionKind::kSwitch) {
        if (word == "true") parsed.arguments.emplace_back(option.flag);
      } else {
        parsed.arguments.insert(parsed.arguments.end(), {option.flag, word});
      }
    }
    config_.hvdrun_options.push_back(std::move(parsed));
  }
  return Status::Ok();
}

StatusOr<std::string> ExperimentParser::HvdrunOptionValue(const HvdrunOptionKey& option,
                                                          const YAML::Node& entry) const {
  const std::string what = std::string("hvdrun.") + option.key;
  StatusOr<std::string> text = ScalarText(entry, what);
  if (!text.ok()) return text.status();
  const std::string& word = text.value();
  switch (option.kind) {
    case HvdrunOptionKind::kPort:
    case HvdrunOptionKind::kSeconds: {
      const bool port = option.kind == HvdrunOptionKind::kPort;
      StatusOr<int64_t> number = WholeNumber(entry, what, 1, port ? 65535 : 86400);
      if (!number.ok()) return number.status();
      return std::to_string(number.value());
    }
    case HvdrunOptionKind::kSwitch:
      if (!IsPlainBoolean(entry)) {
        return Status::Error(Where(entry).Prefix() + what + ": '" + word + "' is not true or false");
      }
      return std::string((word[0] == 't' || word[0] == 'T') ? "true" : "false");
    case HvdrunOptionKind::kPath:
      if (word.empty()) return Status::Error(Where(entry).Prefix() + what + " is empty");
      return AbsolutePath(word);
    case HvdrunOptionKind::kInterfaces: {
      // hvdrun takes a name, or names joined by commas (launcher/launch_flags.cc).
      const std::string place = Where(entry).Prefix() + what + ": '" + word + "': ";
      if (word.empty() || word.back() == ',') return Status::Error(place + "an empty interface name");
      std::stringstream names(word);
      for (std::string name; std::getline(names, name, ',');) {
        if (name.empty()) return Status::Error(place + "an empty interface name");
        if (!IsValidInterfaceName(name)) {
          return Status::Error(place + "'" + name +
                               "' is not an interface name (1 to 15 characters, no '/', ':', ',' or spaces)");
        }
      }
      return word;
    }
    case HvdrunOptionKind::kText:
      if (word.empty()) return Status::Error(Where(entry).Prefix() + what + " is empty");
      return word;
  }
  return word;
}

}  // namespace hvdrun::lab::experiment_file
