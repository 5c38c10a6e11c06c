#include "lab/experiment/experiment_parser.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
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
#include "common/yaml_depth.h"
#include "lab/experiment/experiment_limits.h"

namespace hvdrun::lab::experiment_file {

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

namespace {

// The offset of the first byte of `text` that is not part of well-formed UTF-8 (the Unicode
// standard's table 3-7: no overlong form, no surrogate, nothing above U+10FFFF); npos when none is.
size_t FirstNonUtf8Byte(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    size_t length = 1;
    unsigned char low = 0x80;
    unsigned char high = 0xbf;
    if (byte < 0x80) {
      ++i;
      continue;
    }
    if (byte >= 0xc2 && byte <= 0xdf) {
      length = 2;
    } else if (byte >= 0xe0 && byte <= 0xef) {
      length = 3;
      low = byte == 0xe0 ? 0xa0 : 0x80;
      high = byte == 0xed ? 0x9f : 0xbf;
    } else if (byte >= 0xf0 && byte <= 0xf4) {
      length = 4;
      low = byte == 0xf0 ? 0x90 : 0x80;
      high = byte == 0xf4 ? 0x8f : 0xbf;
    } else {
      return i;
    }
    if (i + length > text.size()) return i;
    for (size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if (next < (k == 1 ? low : 0x80) || next > (k == 1 ? high : 0xbf)) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

// The offset of the first C0 control character or DEL of `text` other than tab, LF and CR, which
// YAML's printable characters leave out; npos when none is.
size_t FirstControlByte(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if ((byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') || byte == 0x7f) return i;
  }
  return std::string_view::npos;
}

}  // namespace

StatusOr<YAML::Node> ExperimentParser::LoadYaml(std::string_view text) const {
  if (text.size() > kMaxExperimentFileBytes) {
    return Status::Error(path_ + ": the experiment is " + std::to_string(text.size()) +
                         " bytes long, more than the " + std::to_string(kMaxExperimentFileBytes) +
                         " hvdrun-lab reads");
  }
  // YAML is printable Unicode text; every value becomes part of a command and of JSON files, which
  // need UTF-8. A control character (yaml-cpp reads a NUL and the byte after it as one other byte)
  // is refused as a byte that is not UTF-8 is.
  const size_t not_utf8 = FirstNonUtf8Byte(text);
  const size_t control = FirstControlByte(text);
  if (const size_t bad = std::min(not_utf8, control); bad != std::string_view::npos) {
    const std::string_view before = text.substr(0, bad);
    const size_t line_start = before.rfind('\n');
    SourcePosition position{
        path_, 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n')),
        static_cast<int>(line_start == std::string_view::npos ? bad + 1 : bad - line_start)};
    char byte[8];
    std::snprintf(byte, sizeof(byte), "0x%02x", static_cast<unsigned char>(text[bad]));
    return Status::Error(position.Prefix() + "byte " + byte +
                         (bad == control
                              ? " is a control character; YAML text holds none but tab and line ends"
                              : " is not UTF-8 text; an experiment file is UTF-8 (YAML's encoding)"));
  }
  try {
    return LoadYamlWithin(std::string(text), kMaxYamlDepth);
  } catch (const YamlTooDeep& deep) {
    return Status::Error(At(deep.mark).Prefix() + "maps and lists nested deeper than " +
                         std::to_string(kMaxYamlDepth) + " levels, the most hvdrun-lab reads");
  } catch (const YAML::Exception& error) {
    return Status::Error(At(error.mark).Prefix() + "not valid YAML: " + error.msg);
  }
}

StatusOr<ExperimentConfig> ExperimentParser::Parse(std::string_view text) {
  StatusOr<YAML::Node> loaded = LoadYaml(text);
  if (!loaded.ok()) return loaded.status();
  const YAML::Node& root = loaded.value();
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

SourcePosition ExperimentParser::At(const YAML::Mark& mark) const {
  SourcePosition position;
  position.file = path_;
  if (mark.line >= 0) {
    position.line = mark.line + 1;
    position.column = mark.column + 1;
  }
  return position;
}

SourcePosition ExperimentParser::Where(const YAML::Node& node) const { return At(node.Mark()); }

std::string ExperimentParser::Relative(const std::string& path) const {
  if (path.empty() || path[0] == '/') return path;
  std::filesystem::path dir = std::filesystem::path(path_).parent_path();
  return dir.empty() ? path : (dir / path).string();
}

Status ExperimentParser::CollectKeys(const YAML::Node& map, const std::string& what,
                                     const std::vector<std::string>& allowed,
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

StatusOr<std::vector<std::pair<YAML::Node, YAML::Node>>> ExperimentParser::OrderedEntries(
    const YAML::Node& map, const std::string& what) const {
  std::map<std::string, std::pair<YAML::Node, YAML::Node>> seen;
  if (Status status = CollectKeys(map, what, {}, seen); !status.ok()) return status;
  std::vector<std::pair<YAML::Node, YAML::Node>> entries;
  for (auto it = map.begin(); it != map.end(); ++it) entries.emplace_back(it->first, it->second);
  return entries;
}

StatusOr<std::string> ExperimentParser::ScalarText(const YAML::Node& node, const std::string& what) const {
  if (!node.IsScalar()) {
    return Status::Error(Where(node).Prefix() + what + " must be a single value, not " + Describe(node));
  }
  return node.Scalar();
}

std::string ExperimentParser::Describe(const YAML::Node& node) {
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

StatusOr<int64_t> ExperimentParser::WholeNumber(const YAML::Node& node, const std::string& what, int64_t min,
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

StatusOr<double> ExperimentParser::PositiveNumber(const YAML::Node& node, const std::string& what,
                                                  double max) const {
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

Status ExperimentParser::CheckDirectoryName(const std::string& name, const SourcePosition& position) const {
  bool ok = !name.empty() && name != "." && name != ".." && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
  });
  if (ok) return Status::Ok();
  return Status::Error(position.Prefix() + "name '" + name +
                       "' names the results directory: use only letters, digits, '-', '_' and '.'");
}

}  // namespace hvdrun::lab::experiment_file
