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

#include "common/placement/hostfile.h"
#include "common/whole_number.h"
#include "lab/whole_file.h"

namespace hvdrun::lab::experiment_file {

Status ExperimentParser::ParseHosts(const std::map<std::string, std::pair<YAML::Node, YAML::Node>>& keys) {
  auto hosts = keys.find("hosts");
  auto hostfile = keys.find("hostfile");
  if (hosts != keys.end() && hostfile != keys.end()) {
    return Status::Error(Where(hostfile->second.first).Prefix() + "give either hosts or hostfile, not both");
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
    // Read here, bounded, and parsed as hvdrun parses one (a hostfile named /dev/zero is refused).
    const std::string path = Relative(text.value());
    StatusOr<std::string> contents = ReadWholeFile(path, kMaxHostfileBytes);
    if (!contents.ok()) {
      return Status::Error(Where(node).Prefix() + "hostfile: " + contents.status().message());
    }
    StatusOr<std::vector<HostSlots>> parsed = ParseHostfile(contents.value(), path);
    if (!parsed.ok()) {
      return Status::Error(Where(node).Prefix() + "hostfile: " + WithoutFlag(parsed.status(), "--hostfile"));
    }
    config_.hosts = parsed.value();
    config_.hosts_position = Where(node);
  }
  return Status::Ok();
}

}  // namespace hvdrun::lab::experiment_file
