#include "lab/host_facts.h"

#include <algorithm>
#include <set>

#include "common/host/host_facts.h"
#include "lab/json_fields.h"

namespace hvdrun::lab {

HostFacts HostFactsOf(const std::vector<protocol::HostFact>& facts) {
  HostFacts host;
  for (const protocol::HostFact& fact : facts) host.facts[fact.key] = {fact.value, fact.source};
  host.gpu_count = GpuCountOf(facts);
  auto hostname = host.facts.find("hostname");
  bool named = hostname != host.facts.end() && hostname->second.value != kFactNotFound;
  host.host = named ? hostname->second.value : "localhost";
  return host;
}

HostFacts ProbeLocalHost() { return HostFactsOf(ProbeHostFacts()); }

MachineFacts MachineFactsOf(const HostFacts& host) {
  MachineFacts machine;
  machine.gpus = host.gpu_count;
  auto gpus = host.facts.find("gpus");
  machine.gpus_source = gpus != host.facts.end() ? gpus->second.source : "not probed";
  return machine;
}

nlohmann::json ToJson(const HostFacts& host) {
  std::vector<protocol::HostFact> facts;
  for (const auto& [key, fact] : host.facts) facts.push_back({key, fact.value, fact.source});
  nlohmann::json json = hvdrun::HostFactsToJson(host.host, facts);
  json["gpu_count"] = host.gpu_count;  // as kept, also for facts read from a file without the fact
  return json;
}

StatusOr<HostFacts> HostFactsFromJson(const nlohmann::json& json, const std::string& source) {
  if (!json.is_object()) return Status::Error("not a JSON object");
  HostFacts host;
  if (json.contains("host") && json["host"].is_string()) host.host = json["host"].get<std::string>();
  if (json.contains("gpu_count") && json["gpu_count"].is_number()) {
    constexpr int64_t kMaxGpus = 65536;
    std::optional<int64_t> count = JsonWholeNumber(json["gpu_count"], 0, kMaxGpus);
    if (!count) {
      return Status::Error("\"gpu_count\" is " + JsonValueText(json["gpu_count"]) +
                           "; expected a whole number from 0 to " + std::to_string(kMaxGpus));
    }
    host.gpu_count = static_cast<int>(*count);
  }
  // Facts under "facts", or at the top level (a flatter file from another tool).
  const nlohmann::json& facts = json.contains("facts") && json["facts"].is_object() ? json["facts"] : json;
  for (const char* key : kHostFactKeys) {
    auto it = facts.find(key);
    if (it == facts.end()) continue;
    if (it->is_string()) {
      host.facts[key] = {it->get<std::string>(), source};
    } else if (it->is_object() && it->contains("value") && (*it)["value"].is_string()) {
      std::string fact_source = it->contains("source") && (*it)["source"].is_string()
                                    ? (*it)["source"].get<std::string>() + ", " + source
                                    : source;
      host.facts[key] = {(*it)["value"].get<std::string>(), fact_source};
    }
  }
  return host;
}

std::string NicModels(const std::string& nics) {
  // The kinds an interface without a device reports instead of a driver (common/host/host_facts.cc).
  static const std::set<std::string> kVirtual = {"virtual", "bridge", "vlan", "bond",     "team",  "vxlan",
                                                 "macvlan", "ipvlan", "veth", "tun",      "dummy", "ifb",
                                                 "gre",     "geneve", "dsa",  "wireguard"};
  std::vector<std::string> models;
  int virtual_interfaces = 0;
  size_t start = 0;
  while (start <= nics.size()) {
    size_t end = nics.find("; ", start);
    std::string entry = nics.substr(start, end == std::string::npos ? std::string::npos : end - start);
    // "name addresses, speed, driver"
    size_t driver_at = entry.rfind(", ");
    size_t speed_at = driver_at == std::string::npos || driver_at == 0 ? std::string::npos
                                                                       : entry.rfind(", ", driver_at - 1);
    if (speed_at == std::string::npos) return nics;
    std::string speed = entry.substr(speed_at + 2, driver_at - speed_at - 2);
    std::string driver = entry.substr(driver_at + 2);
    bool known_speed = speed.size() > 5 && speed.compare(speed.size() - 5, 5, " Mb/s") == 0;
    if (!known_speed && speed != "speed unknown") return nics;
    if (kVirtual.contains(driver)) {
      ++virtual_interfaces;
    } else {
      models.push_back(known_speed ? driver + " (" + speed + ")" : driver);
    }
    if (end == std::string::npos) break;
    start = end + 2;
  }
  if (!models.empty()) return CountedList(models);
  return "none (" + std::to_string(virtual_interfaces) + " virtual interface" +
         (virtual_interfaces == 1 ? "" : "s") + ")";
}

}  // namespace hvdrun::lab
