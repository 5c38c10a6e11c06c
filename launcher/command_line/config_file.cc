#include "launcher/command_line/config_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/error_text.h"
#include "common/yaml_depth.h"
#include "launcher/command_line/option_table.h"

namespace hvdrun {
namespace {

// A config file of horovodrun's holds a few dozen lines; anything this large is not one.
constexpr size_t kMaxConfigBytes = size_t{1} << 20;
// horovodrun's file has sections of settings, two levels; a few more leave room for a list value.
constexpr int kMaxConfigDepth = 8;

std::string Lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

class ConfigReader {
 public:
  explicit ConfigReader(std::string path) : path_(std::move(path)) {}

  Status Read(const YAML::Node& root);
  std::vector<ConfigSetting> TakeSettings() { return std::move(settings_); }

 private:
  std::string Place(const YAML::Node& node, const std::string& key) const {
    return path_ + ":" + std::to_string(node.Mark().line + 1) + ": " + key;
  }
  Status ReadController(const YAML::Node& key, const YAML::Node& value);
  Status ReadAutotune(const YAML::Node& value);
  Status ReadSection(const std::string& section, const YAML::Node& value);
  Status ReadSetting(const std::string& config_key, const YAML::Node& key, const YAML::Node& value);
  // The keys the option table has under `section`, for errors: "cycle_time_ms, ...".
  static std::string KeysOf(const std::string& section);

  std::string path_;
  std::vector<ConfigSetting> settings_;
};

Status ConfigReader::Read(const YAML::Node& root) {
  if (root.IsNull()) return Status::Ok();
  if (!root.IsMap()) return Status::Error(path_ + ": not a mapping of horovodrun's config sections");
  for (auto entry = root.begin(); entry != root.end(); ++entry) {
    const std::string name = entry->first.as<std::string>();
    Status status;
    if (name == "controller") {
      status = ReadController(entry->first, entry->second);
    } else if (name == "autotune") {
      status = ReadAutotune(entry->second);
    } else if (name == "params" || name == "timeline" || name == "stall_check" || name == "library_options" ||
               name == "logging") {
      status = entry->second.IsNull() ? Status::Ok() : ReadSection(name, entry->second);
    } else {
      status = Status::Error(Place(entry->first, PrintableText(name)) +
                             ": not a section of horovodrun's config file (controller, params, autotune, "
                             "timeline, stall_check, library_options, logging)");
    }
    if (!status.ok()) return status;
  }
  return Status::Ok();
}

Status ConfigReader::ReadController(const YAML::Node& key, const YAML::Node& value) {
  const std::string controller = value.IsScalar() ? Lowercase(value.Scalar()) : "";
  for (size_t row = 0; row < OptionTable().size(); ++row) {
    if (CanonicalName(OptionTable()[row]) == "--" + controller &&
        (controller == "gloo" || controller == "mpi")) {
      settings_.push_back(ConfigSetting{row, "", Place(key, "controller")});
      return Status::Ok();
    }
  }
  return Status::Error(Place(key, "controller") + ": '" +
                       PrintableText(value.IsScalar() ? value.Scalar() : "") +
                       "' is not a controller hvdrun has (gloo or mpi)");
}

Status ConfigReader::ReadAutotune(const YAML::Node& value) {
  if (value.IsNull()) return Status::Ok();
  if (!value.IsMap()) return ReadSection("autotune", value);
  // As horovodrun: `enabled: false` (or no `enabled`) turns nothing on, and the section's other
  // settings apply when --autotune does.
  for (auto entry = value.begin(); entry != value.end(); ++entry) {
    const std::string key = entry->first.as<std::string>();
    bool on = true;
    if (key == "enabled" && entry->second.IsScalar() && YAML::convert<bool>::decode(entry->second, on) &&
        !on) {
      continue;
    }
    if (Status status = ReadSetting("autotune." + key, entry->first, entry->second); !status.ok()) {
      return status;
    }
  }
  return Status::Ok();
}

Status ConfigReader::ReadSection(const std::string& section, const YAML::Node& value) {
  if (!value.IsMap()) {
    return Status::Error(Place(value, section) + ": expected a mapping of " + KeysOf(section));
  }
  for (auto entry = value.begin(); entry != value.end(); ++entry) {
    const std::string key = section + "." + entry->first.as<std::string>();
    if (Status status = ReadSetting(key, entry->first, entry->second); !status.ok()) return status;
  }
  return Status::Ok();
}

Status ConfigReader::ReadSetting(const std::string& config_key, const YAML::Node& key,
                                 const YAML::Node& value) {
  const std::string place = Place(key, PrintableText(config_key));
  const std::vector<OptionRow>& table = OptionTable();
  const auto first = std::find_if(table.begin(), table.end(), [&](const OptionRow& row) {
    return row.config_key != nullptr && config_key == row.config_key;
  });
  if (first == table.end()) {
    const std::string section = config_key.substr(0, config_key.find('.'));
    return Status::Error(place + ": not a key of horovodrun's config file (" + section + ": " +
                         KeysOf(section) + ")");
  }
  if (value.IsNull()) return Status::Ok();
  if (!value.IsScalar()) return Status::Error(place + ": expected one value, not a list or a mapping");
  if (first->syntax.kind != OptionKind::kSwitch) {
    settings_.push_back(ConfigSetting{static_cast<size_t>(first - table.begin()), value.Scalar(), place});
    return Status::Ok();
  }
  bool on = false;
  if (!YAML::convert<bool>::decode(value, on)) {
    return Status::Error(place + ": '" + PrintableText(value.Scalar()) + "' is not true or false");
  }
  for (size_t row = 0; row < table.size(); ++row) {
    if (table[row].config_key != nullptr && config_key == table[row].config_key &&
        table[row].config_when == on) {
      settings_.push_back(ConfigSetting{row, "", place});
      return Status::Ok();
    }
  }
  return Status::Error(place + ": " + (on ? "true" : "false") + " is not a setting hvdrun has");
}

std::string ConfigReader::KeysOf(const std::string& section) {
  std::string keys;
  for (const OptionRow& row : OptionTable()) {
    if (row.config_key == nullptr || std::string(row.config_key).rfind(section + ".", 0) != 0) continue;
    const std::string key = std::string(row.config_key).substr(section.size() + 1);
    if (keys.find(key) != std::string::npos) continue;  // a switch pair's second row
    keys += (keys.empty() ? "" : ", ") + key;
  }
  return keys;
}

}  // namespace

StatusOr<std::vector<ConfigSetting>> ReadConfigFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return Status::Error("--config-file: cannot read '" + PrintableText(path) + "': " + std::strerror(errno));
  }
  // Read at most one piece past the limit, so that /dev/zero or a wrong file ends at once.
  std::string contents;
  char piece[1 << 16];
  while (contents.size() <= kMaxConfigBytes && file.read(piece, sizeof(piece)).gcount() > 0) {
    contents.append(piece, static_cast<size_t>(file.gcount()));
  }
  if (contents.size() > kMaxConfigBytes) {
    return Status::Error("--config-file: '" + PrintableText(path) +
                         "' holds more than 1 MiB; not a config file");
  }
  YAML::Node root;
  try {
    root = LoadYamlWithin(contents, kMaxConfigDepth);
  } catch (const YamlTooDeep& deep) {
    return Status::Error("--config-file: " + PrintableText(path) + ":" + std::to_string(deep.mark.line + 1) +
                         ": maps and lists nested deeper than " + std::to_string(kMaxConfigDepth) +
                         " levels (horovodrun's config file has sections of settings: two levels)");
  } catch (const YAML::Exception& error) {
    return Status::Error("--config-file: " + PrintableText(path) + ":" + std::to_string(error.mark.line + 1) +
                         ": not valid YAML: " + PrintableText(error.msg));
  }
  ConfigReader reader(path);
  try {
    if (Status status = reader.Read(root); !status.ok()) {
      return Status::Error("--config-file: " + status.message());
    }
  } catch (const YAML::Exception& error) {
    return Status::Error("--config-file: " + PrintableText(path) + ":" + std::to_string(error.mark.line + 1) +
                         ": " + PrintableText(error.msg));
  }
  return reader.TakeSettings();
}

}  // namespace hvdrun
