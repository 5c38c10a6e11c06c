#include "lab/experiment_config.h"

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

#include "common/placement/hostfile.h"
#include "common/whole_number.h"

namespace hvdrun::lab {
namespace {

constexpr int kMaxRepeats = 1000;
constexpr double kMaxTimeoutS = 7 * 24 * 3600;
constexpr int kMaxProcesses = 1 << 20;  // hvdrun's own -np limit

const std::vector<std::string>& TopLevelKeys() {
  static const std::vector<std::string> kKeys = {
      "name",    "description", "hosts",   "hostfile",        "program",
      "args",    "env",         "figures", "defaults",        "matrix",
      "exclude", "repeats",     "timeout", "gpus_per_server", "hvdrun"};
  return kKeys;
}

const std::vector<std::string>& FigureKeys() {
  static const std::vector<std::string> kKeys = {"step_time",       "step_time_scale", "throughput",
                                                 "throughput_unit", "accuracy",        "training_time"};
  return kKeys;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// hvdrun's host parsers name their flag ("-H: ..."); here the key names the place instead.
std::string WithoutFlag(const Status& status, const std::string& flag) {
  const std::string& message = status.message();
  return message.rfind(flag + ": ", 0) == 0 ? message.substr(flag.size() + 2) : message;
}

bool IsVariableName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) != 0) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

bool IsPlainBoolean(const YAML::Node& node) {
  static const std::set<std::string> kBooleans = {"true", "True", "TRUE", "false", "False", "FALSE"};
  return node.Tag() == "?" && kBooleans.count(node.Scalar()) > 0;
}

std::optional<double> ParseNumber(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])) != 0) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// The well-known axes other than backend, np and servers, and what they set.
struct NamedAxis {
  const char* name;
  AxisKind kind;
  const char* target;
};
constexpr NamedAxis kNamedAxes[] = {
    {"model", AxisKind::kProgramFlag, "--model"},
    {"batch_size", AxisKind::kProgramFlag, "--batch-size"},
    {"compression", AxisKind::kCompression, ""},
    {"device", AxisKind::kProgramFlag, "--device"},
    {"threads", AxisKind::kProgramFlag, "--threads"},
    {"fusion_threshold", AxisKind::kEnvironment, "HOROVOD_FUSION_THRESHOLD"},
    {"fusion", AxisKind::kFusion, ""},
};

class Parser {
 public:
  explicit Parser(const std::string& path) : path_(path) {}

  StatusOr<ExperimentConfig> Parse(std::string_view text) {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text));
    } catch (const YAML::ParserException& error) {
      return Status::Error(At(error.mark).Prefix() + "not valid YAML: " + error.msg);
    }
    if (!root.IsMap()) {
      return Status::Error(Where(root).Prefix() +
                           "the experiment must be a map of keys (program, matrix, ...); see docs/lab.md");
    }
    config_.path = path_;
    std::map<std::string, std::pair<YAML::Node, YAML::Node>> keys;  // name -> (key node, value node)
    if (Status status = CollectKeys(root, "the experiment", TopLevelKeys(), keys); !status.ok()) {
      return status;
    }

    config_.name = std::filesystem::path(path_).stem().string();
    if (auto it = keys.find("name"); it != keys.end()) {
      StatusOr<std::string> name = ScalarText(it->second.second, "name");
      if (!name.ok()) return name.status();
      config_.name = name.value();
      if (Status status = CheckDirectoryName(config_.name, Where(it->second.second)); !status.ok()) {
        return status;
      }
    } else if (Status status = CheckDirectoryName(config_.name, Where(root)); !status.ok()) {
      return status;
    }
    if (auto it = keys.find("description"); it != keys.end()) {
      StatusOr<std::string> description = ScalarText(it->second.second, "description");
      if (!description.ok()) return description.status();
      config_.description = description.value();
    }
    if (Status status = ParseHosts(keys); !status.ok()) return status;
    auto program = keys.find("program");
    if (program == keys.end()) {
      return Status::Error(Where(root).Prefix() +
                           "missing key 'program' (the command every cell runs, e.g. hvdrun-trainer)");
    }
    StatusOr<std::string> program_text = ScalarText(program->second.second, "program");
    if (!program_text.ok()) return program_text.status();
    if (program_text.value().empty()) {
      return Status::Error(Where(program->second.second).Prefix() + "program is empty");
    }
    config_.program = program_text.value();
    config_.program_position = Where(program->second.second);
    if (auto it = keys.find("args"); it != keys.end()) {
      if (Status status = ParseArgs(it->second.second); !status.ok()) return status;
    }
    if (auto it = keys.find("env"); it != keys.end()) {
      if (Status status = ParseEnv(it->second.second); !status.ok()) return status;
    }
    if (auto it = keys.find("figures"); it != keys.end()) {
      if (Status status = ParseFigures(it->second.second); !status.ok()) return status;
    }
    if (auto it = keys.find("repeats"); it != keys.end()) {
      StatusOr<int64_t> repeats = WholeNumber(it->second.second, "repeats", 1, kMaxRepeats);
      if (!repeats.ok()) return repeats.status();
      config_.repeats = static_cast<int>(repeats.value());
    }
    if (auto it = keys.find("timeout"); it != keys.end()) {
      StatusOr<double> timeout = PositiveNumber(it->second.second, "timeout (seconds)", kMaxTimeoutS);
      if (!timeout.ok()) return timeout.status();
      config_.timeout_s = timeout.value();
    }
    if (auto it = keys.find("gpus_per_server"); it != keys.end()) {
      StatusOr<int64_t> gpus = WholeNumber(it->second.second, "gpus_per_server", 0, 1024);
      if (!gpus.ok()) return gpus.status();
      config_.gpus_per_server = static_cast<int>(gpus.value());
    }
    if (auto it = keys.find("hvdrun"); it != keys.end()) {
      if (Status status = ParseHvdrunOptions(it->second.second); !status.ok()) return status;
    }
    if (Status status = ParseAxes(keys); !status.ok()) return status;
    if (auto it = keys.find("exclude"); it != keys.end()) {
      if (Status status = ParseExcludes(it->second.second); !status.ok()) return status;
    }
    return std::move(config_);
  }

 private:
  SourcePosition At(const YAML::Mark& mark) const {
    SourcePosition position;
    position.file = path_;
    if (mark.line >= 0) {
      position.line = mark.line + 1;
      position.column = mark.column + 1;
    }
    return position;
  }
  SourcePosition Where(const YAML::Node& node) const { return At(node.Mark()); }

  std::string Relative(const std::string& path) const {
    if (path.empty() || path[0] == '/') return path;
    std::filesystem::path dir = std::filesystem::path(path_).parent_path();
    return dir.empty() ? path : (dir / path).string();
  }

  // Every key of `map` must be in `allowed` and appear once; `what` names the map in errors.
  Status CollectKeys(const YAML::Node& map, const std::string& what, const std::vector<std::string>& allowed,
                     std::map<std::string, std::pair<YAML::Node, YAML::Node>>& keys) const {
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) return Status::Error(Where(it->first).Prefix() + "keys must be plain names");
      const std::string& key = it->first.Scalar();
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        return Status::Error(Where(it->first).Prefix() + "unknown key '" + key + "' in " + what +
                             " (expected one of: " + JoinNames(allowed) + ")");
      }
      if (auto [first, inserted] = keys.emplace(key, std::make_pair(it->first, it->second)); !inserted) {
        SourcePosition before = Where(first->second.first);
        return Status::Error(Where(it->first).Prefix() + "duplicate key '" + key + "' in " + what +
                             " (first at line " + std::to_string(before.line) + ")");
      }
    }
    return Status::Ok();
  }

  // Keys of a map in file order, checked to be unique scalars.
  StatusOr<std::vector<std::pair<YAML::Node, YAML::Node>>> OrderedEntries(const YAML::Node& map,
                                                                          const std::string& what) const {
    std::map<std::string, std::pair<YAML::Node, YAML::Node>> seen;
    if (Status status = CollectKeys(map, what, {}, seen); !status.ok()) return status;
    std::vector<std::pair<YAML::Node, YAML::Node>> entries;
    for (auto it = map.begin(); it != map.end(); ++it) entries.emplace_back(it->first, it->second);
    return entries;
  }

  StatusOr<std::string> ScalarText(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) {
      return Status::Error(Where(node).Prefix() + what + " must be a single value, not " + Describe(node));
    }
    return node.Scalar();
  }

  static std::string Describe(const YAML::Node& node) {
    switch (node.Type()) {
      case YAML::NodeType::Map:
        return "a map";
      case YAML::NodeType::Sequence:
        return "a list";
      case YAML::NodeType::Null:
        return "empty";
      default:
        return "'" + node.Scalar() + "'";
    }
  }

  StatusOr<int64_t> WholeNumber(const YAML::Node& node, const std::string& what, int64_t min,
                                int64_t max) const {
    StatusOr<std::string> text = ScalarText(node, what);
    if (!text.ok()) return text.status();
    const ParsedWholeNumber value = ParseWholeNumber(text.value(), min, max);
    if (!value.ok()) {
      return Status::Error(Where(node).Prefix() + what + ": '" + text.value() +
                           "' is not a whole number from " + std::to_string(min) + " to " +
                           std::to_string(max));
    }
    return value.value;
  }

  StatusOr<double> PositiveNumber(const YAML::Node& node, const std::string& what, double max) const {
    StatusOr<std::string> text = ScalarText(node, what);
    if (!text.ok()) return text.status();
    std::optional<double> value = ParseNumber(text.value());
    if (!value || *value <= 0 || *value > max) {
      std::ostringstream limit;
      limit << max;
      return Status::Error(Where(node).Prefix() + what + ": '" + text.value() +
                           "' is not a number above 0 and at most " + limit.str());
    }
    return *value;
  }

  Status CheckDirectoryName(const std::string& name, const SourcePosition& position) const {
    bool ok =
        !name.empty() && name != "." && name != ".." && std::all_of(name.begin(), name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
        });
    if (ok) return Status::Ok();
    return Status::Error(position.Prefix() + "name '" + name +
                         "' names the results directory: use only letters, digits, '-', '_' and '.'");
  }

  Status ParseHosts(const std::map<std::string, std::pair<YAML::Node, YAML::Node>>& keys) {
    auto hosts = keys.find("hosts");
    auto hostfile = keys.find("hostfile");
    if (hosts != keys.end() && hostfile != keys.end()) {
      return Status::Error(Where(hostfile->second.first).Prefix() +
                           "give either hosts or hostfile, not both");
    }
    if (hosts != keys.end()) {
      const YAML::Node& node = hosts->second.second;
      std::string spec;
      if (node.IsSequence()) {
        for (const YAML::Node& entry : node) {
          StatusOr<std::string> text = ScalarText(entry, "each entry of hosts");
          if (!text.ok()) return text.status();
          spec += (spec.empty() ? "" : ",") + text.value();
        }
      } else {
        StatusOr<std::string> text = ScalarText(node, "hosts");
        if (!text.ok()) return text.status();
        spec = text.value();
      }
      StatusOr<std::vector<HostSlots>> parsed = ParseHostList(spec);
      if (!parsed.ok()) {
        return Status::Error(Where(node).Prefix() + "hosts: " + WithoutFlag(parsed.status(), "-H"));
      }
      config_.hosts = parsed.value();
      config_.hosts_position = Where(node);
    }
    if (hostfile != keys.end()) {
      const YAML::Node& node = hostfile->second.second;
      StatusOr<std::string> text = ScalarText(node, "hostfile");
      if (!text.ok()) return text.status();
      StatusOr<std::vector<HostSlots>> parsed = ReadHostfile(Relative(text.value()));
      if (!parsed.ok()) {
        return Status::Error(Where(node).Prefix() +
                             "hostfile: " + WithoutFlag(parsed.status(), "--hostfile"));
      }
      config_.hosts = parsed.value();
      config_.hosts_position = Where(node);
    }
    return Status::Ok();
  }

  Status ParseArgs(const YAML::Node& node) {
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

  Status ParseEnv(const YAML::Node& node) {
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

  Status ParseFigures(const YAML::Node& node) {
    if (!node.IsMap()) {
      return Status::Error(Where(node).Prefix() + "figures must be a map (step_time: ..., ...)");
    }
    std::map<std::string, std::pair<YAML::Node, YAML::Node>> keys;
    if (Status status = CollectKeys(node, "figures", FigureKeys(), keys); !status.ok()) return status;
    for (const auto& [key, nodes] : keys) {
      if (key == "step_time_scale") {
        StatusOr<double> scale = PositiveNumber(nodes.second, "figures.step_time_scale", 1e9);
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

  // "~/x" under $HOME; a relative path under the experiment file's directory; made absolute, since
  // hvdrun runs in each run's own directory.
  std::string AbsolutePath(const std::string& path) const {
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

  Status ParseHvdrunOptions(const YAML::Node& node) {
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
        StatusOr<std::string> text = ScalarText(entry, what);
        if (!text.ok()) return text.status();
        std::string word = text.value();
        switch (option.kind) {
          case HvdrunOptionKind::kPort:
          case HvdrunOptionKind::kSeconds: {
            const bool port = option.kind == HvdrunOptionKind::kPort;
            StatusOr<int64_t> number = WholeNumber(entry, what, 1, port ? 65535 : 86400);
            if (!number.ok()) return number.status();
            word = std::to_string(number.value());
            break;
          }
          case HvdrunOptionKind::kSwitch:
            if (!IsPlainBoolean(entry)) {
              return Status::Error(Where(entry).Prefix() + what + ": '" + word + "' is not true or false");
            }
            word = (word[0] == 't' || word[0] == 'T') ? "true" : "false";
            break;
          case HvdrunOptionKind::kPath:
            if (word.empty()) return Status::Error(Where(entry).Prefix() + what + " is empty");
            word = AbsolutePath(word);
            break;
          case HvdrunOptionKind::kText:
          case HvdrunOptionKind::kInterfaces:
            if (word.empty()) return Status::Error(Where(entry).Prefix() + what + " is empty");
            break;
        }
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

  // Names the axis `name` (as written at `key`) or says why it is not one.
  StatusOr<Axis> NewAxis(const YAML::Node& key) const {
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
    } else if (name.size() > 1 && name[0] == '-') {
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

  StatusOr<AxisValue> NewValue(const Axis& axis, const YAML::Node& node) const {
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
      case AxisKind::kProgramFlag:
        if (value.text.empty() && !value.is_boolean) return fail("empty value");
        break;
      case AxisKind::kCompression:
        if (!CompressionSettingArguments(value.text)) {
          return fail("unknown setting '" + value.text +
                      "' (expected none, fp16, bf16, fp8, fp8-e4m3, fp8-e5m2 or fp8-naive)");
        }
        break;
      case AxisKind::kFusion: {
        std::optional<FusionSetting> setting = ParseFusionSetting(value.text);
        if (!setting) {
          return fail("unknown setting '" + value.text +
                      "' (expected off, on, horovod-0.19, horovod-0.20, or whole MiB/ms such as 64/5)");
        }
        value.fusion = *setting;
        break;
      }
    }
    return value;
  }

  // `defaults` (one value per axis) and `matrix` (a value or a list per axis); matrix wins.
  Status ParseAxes(const std::map<std::string, std::pair<YAML::Node, YAML::Node>>& keys) {
    std::vector<Axis> axes;
    auto add = [&](const YAML::Node& key, const YAML::Node& values, bool from_matrix) -> Status {
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
          return Status::Error(value->position.Prefix() + axis->name + ": '" + value->text +
                               "' is listed twice");
        }
        axis.value().values.push_back(value.value());
      }
      auto existing =
          std::find_if(axes.begin(), axes.end(), [&](const Axis& a) { return a.name == axis->name; });
      if (existing != axes.end()) {
        *existing = std::move(axis.value());
      } else {
        axes.push_back(std::move(axis.value()));
      }
      return Status::Ok();
    };
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
        if (Status status = add(key, values, std::string(section) == "matrix"); !status.ok()) return status;
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

  Status ParseExcludes(const YAML::Node& node) {
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

  std::string path_;
  ExperimentConfig config_;
};

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
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  // hvdrun's --fusion-threshold-mb takes whole MiB, --cycle-time-ms any number of ms.
  std::optional<double> mb = ParseNumber(std::string(text.substr(0, slash)));
  std::optional<double> ms = ParseNumber(std::string(text.substr(slash + 1)));
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
  return Parser(path).Parse(text);
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
