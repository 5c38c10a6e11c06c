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

#include "common/error_text.h"
#include "common/placement/hostfile.h"
#include "common/whole_number.h"

namespace hvdrun::lab::experiment_file {
namespace {

// A flag a program can take as one word: -x or --name, whose name starts with a letter or digit and
// holds letters, digits, '-', '_' and '.'; never "-" or "--", which are not flags.
bool IsProgramFlagName(std::string_view name) {
  const std::string_view body = name.substr(name.rfind("--", 0) == 0 ? 2 : 1);
  if (body.empty() || std::isalnum(static_cast<unsigned char>(body[0])) == 0) return false;
  return std::all_of(body.begin(), body.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace

StatusOr<Axis> ExperimentParser::NewAxis(const YAML::Node& key) const {
  Axis axis;
  axis.name = key.Scalar();
  axis.position = Where(key);
  const std::string& name = axis.name;
  if (name == "backend") {
    axis.kind = AxisKind::kBackend;
  } else if (name == "np") {
    axis.kind = AxisKind::kNumProc;
  } else if (name == "processes_per_server") {
    axis.kind = AxisKind::kProcsPerServer;
  } else if (name == "servers") {
    axis.kind = AxisKind::kServers;
  } else if (!name.empty() && name[0] == '-') {
    if (!IsProgramFlagName(name)) {
      return Status::Error(axis.position.Prefix() + "axis '" + OneLineText(name) +
                           "' is not a program flag (expected -x or --name: a letter or digit, then "
                           "letters, digits, '-', '_' or '.'; '--' ends a program's flags)");
    }
    axis.kind = AxisKind::kProgramFlag;
    axis.target = name;
  } else if (name.rfind("env.", 0) == 0) {
    axis.kind = AxisKind::kEnvironment;
    axis.target = name.substr(4);
    if (!IsVariableName(axis.target)) {
      return Status::Error(axis.position.Prefix() + "'" + name + "': '" + axis.target +
                           "' is not a variable name");
    }
  } else {
    auto named = std::find_if(std::begin(kNamedAxes), std::end(kNamedAxes),
                              [&](const NamedAxis& n) { return name == n.name; });
    if (named == std::end(kNamedAxes)) {
      return Status::Error(
          axis.position.Prefix() + "unknown axis '" + name +
          "' (expected backend, np, processes_per_server, servers, model, batch_size, device, "
          "threads, compression, fusion, fusion_threshold, a program flag such as --image-size, or "
          "env.NAME)");
    }
    axis.kind = named->kind;
    axis.target = named->target;
  }
  return axis;
}

StatusOr<AxisValue> ExperimentParser::NewValue(const Axis& axis, const YAML::Node& node) const {
  StatusOr<std::string> text = ScalarText(node, axis.name + ": each value");
  if (!text.ok()) return text.status();
  AxisValue value;
  value.text = text.value();
  value.position = Where(node);
  value.is_boolean = IsPlainBoolean(node);
  auto fail = [&](const std::string& why) {
    return Status::Error(value.position.Prefix() + axis.name + ": " + why);
  };
  switch (axis.kind) {
    case AxisKind::kBackend:
      if (value.text != "gloo" && value.text != "mpi" && value.text != "nccl") {
        return fail("unknown backend '" + value.text + "' (expected gloo, mpi or nccl)");
      }
      break;
    case AxisKind::kNumProc:
    case AxisKind::kProcsPerServer:
    case AxisKind::kServers: {
      StatusOr<int64_t> number = WholeNumber(node, axis.name, 1, kMaxProcesses);
      if (!number.ok()) return number.status();
      value.number = static_cast<int>(number.value());
      value.text = std::to_string(value.number);
      break;
    }
    case AxisKind::kEnvironment:
    case AxisKind::kProgramFlag: {
      if (value.text.empty() && !value.is_boolean) return fail("empty value");
      auto named = std::find_if(std::begin(kNamedAxes), std::end(kNamedAxes),
                                [&](const NamedAxis& n) { return axis.name == n.name; });
      if (named != std::end(kNamedAxes) && named->whole_max > 0) {
        StatusOr<int64_t> number = WholeNumber(node, axis.name, named->whole_min, named->whole_max);
        if (!number.ok()) return number.status();
        value.text = std::to_string(number.value());
      }
      break;
    }
    case AxisKind::kCompression:
      if (!CompressionSettingArguments(value.text)) {
        return fail("unknown setting '" + value.text + "' (expected " + CompressionSettingNames() + ")");
      }
      break;
    case AxisKind::kFusion: {
      std::optional<FusionSetting> setting = ParseFusionSetting(value.text);
      if (!setting) {
        return fail("unknown setting '" + value.text +
                    "' (expected off, on, horovod-0.19, horovod-0.20, autotune, or whole MiB/ms such as "
                    "64/5)");
      }
      value.fusion = *setting;
      break;
    }
  }
  return value;
}

Status ExperimentParser::AddAxis(const YAML::Node& key, const YAML::Node& values, bool from_matrix,
                                 std::vector<Axis>& axes) const {
  StatusOr<Axis> axis = NewAxis(key);
  if (!axis.ok()) return axis.status();
  axis.value().from_matrix = from_matrix;
  std::vector<YAML::Node> nodes;
  if (from_matrix && values.IsSequence()) {
    if (values.size() == 0) {
      return Status::Error(Where(values).Prefix() + axis->name + ": the list is empty");
    }
    for (const YAML::Node& value : values) nodes.push_back(value);
  } else {
    nodes.push_back(values);
  }
  std::set<std::pair<std::string, bool>> seen;
  for (const YAML::Node& node : nodes) {
    StatusOr<AxisValue> value = NewValue(axis.value(), node);
    if (!value.ok()) return value.status();
    if (!seen.insert({value->text, value->is_boolean}).second) {
      return Status::Error(value->position.Prefix() + axis->name + ": '" + value->text + "' is listed twice");
    }
    axis.value().values.push_back(value.value());
  }
  auto existing = std::find_if(axes.begin(), axes.end(), [&](const Axis& a) { return a.name == axis->name; });
  if (existing != axes.end()) {
    *existing = std::move(axis.value());
  } else {
    axes.push_back(std::move(axis.value()));
  }
  return Status::Ok();
}

Status ExperimentParser::ParseAxes(const std::map<std::string, std::pair<YAML::Node, YAML::Node>>& keys) {
  std::vector<Axis> axes;
  for (const char* section : {"defaults", "matrix"}) {
    auto it = keys.find(section);
    if (it == keys.end()) continue;
    const YAML::Node& map = it->second.second;
    if (!map.IsMap()) {
      return Status::Error(Where(map).Prefix() + section + " must be a map of axis: " +
                           (std::string(section) == "matrix" ? "[values]" : "value"));
    }
    StatusOr<std::vector<std::pair<YAML::Node, YAML::Node>>> entries = OrderedEntries(map, section);
    if (!entries.ok()) return entries.status();
    for (const auto& [key, values] : entries.value()) {
      if (Status status = AddAxis(key, values, std::string(section) == "matrix", axes); !status.ok()) {
        return status;
      }
    }
  }
  auto find = [&](const char* name) {
    return std::find_if(axes.begin(), axes.end(), [&](const Axis& a) { return a.name == name; });
  };
  if (find("np") != axes.end() && find("processes_per_server") != axes.end()) {
    return Status::Error(find("processes_per_server")->position.Prefix() +
                         "give np (processes in all) or processes_per_server, not both");
  }
  // backend, np (or processes_per_server) and servers are always axes, in that order, so that
  // every cell names them.
  const char* count = find("processes_per_server") != axes.end() ? "processes_per_server" : "np";
  for (auto [name, kind, text] : {std::make_tuple("backend", AxisKind::kBackend, "gloo"),
                                  std::make_tuple(count, AxisKind::kNumProc, "1"),
                                  std::make_tuple("servers", AxisKind::kServers, "1")}) {
    if (auto it = find(name); it != axes.end()) {
      config_.axes.push_back(*it);
      continue;
    }
    Axis axis;
    axis.name = name;
    axis.kind = kind;
    AxisValue value;
    value.text = text;
    if (kind != AxisKind::kBackend) value.number = 1;
    value.position.file = path_;
    axis.values.push_back(value);
    axis.position.file = path_;
    config_.axes.push_back(axis);
  }
  for (Axis& axis : axes) {
    if (!IsPlacementAxis(axis.name)) config_.axes.push_back(std::move(axis));
  }
  return Status::Ok();
}

Status ExperimentParser::ParseExcludes(const YAML::Node& node) {
  if (!node.IsSequence()) {
    return Status::Error(Where(node).Prefix() +
                         "exclude must be a list of maps, as in [{backend: nccl, np: 1}]");
  }
  for (const YAML::Node& entry : node) {
    if (!entry.IsMap() || entry.size() == 0) {
      return Status::Error(Where(entry).Prefix() + "each exclude entry must be a map of axis: value(s)");
    }
    ExcludeRule rule;
    rule.position = Where(entry);
    StatusOr<std::vector<std::pair<YAML::Node, YAML::Node>>> conditions = OrderedEntries(entry, "exclude");
    if (!conditions.ok()) return conditions.status();
    for (const auto& [key, values] : conditions.value()) {
      const Axis* axis = FindAxis(config_, key.Scalar());
      if (axis == nullptr) {
        return Status::Error(Where(key).Prefix() + "exclude: '" + key.Scalar() +
                             "' is not an axis of the matrix or defaults");
      }
      std::vector<YAML::Node> nodes;
      if (values.IsSequence()) {
        for (const YAML::Node& value : values) nodes.push_back(value);
      } else {
        nodes.push_back(values);
      }
      std::vector<std::string> texts;
      for (const YAML::Node& value_node : nodes) {
        StatusOr<AxisValue> value = NewValue(*axis, value_node);
        if (!value.ok()) return value.status();
        bool known = std::any_of(axis->values.begin(), axis->values.end(),
                                 [&](const AxisValue& v) { return v.text == value->text; });
        if (!known) {
          std::vector<std::string> listed;
          for (const AxisValue& v : axis->values) listed.push_back(v.text);
          return Status::Error(value->position.Prefix() + "exclude: '" + value->text +
                               "' is not a value of " + axis->name + " (" + JoinNames(listed) + ")");
        }
        texts.push_back(value->text);
      }
      rule.conditions.emplace_back(axis->name, texts);
    }
    config_.excludes.push_back(std::move(rule));
  }
  return Status::Ok();
}

}  // namespace hvdrun::lab::experiment_file
