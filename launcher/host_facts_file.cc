#include "launcher/host_facts_file.h"

#include <cstdlib>
#include <filesystem>

#include "launcher/results_writer.h"

namespace hvdrun {

nlohmann::json HostFactsToJson(const std::string& host, const std::vector<protocol::HostFact>& facts) {
  nlohmann::json by_key = nlohmann::json::object();
  int gpu_count = 0;
  for (const protocol::HostFact& fact : facts) {
    by_key[fact.key] = {{"value", fact.value}, {"source", fact.source}};
    if (fact.key == "gpu_count") gpu_count = std::atoi(fact.value.c_str());
  }
  return {{"host", host}, {"gpu_count", gpu_count}, {"facts", by_key}};
}

Status WriteHostFactsFile(const std::string& dir, const std::string& host,
                          const std::vector<protocol::HostFact>& facts) {
  std::filesystem::path hosts = std::filesystem::path(dir) / "hosts";
  std::error_code error;
  std::filesystem::create_directories(hosts, error);
  if (error) return Status::Error("--results: cannot create '" + hosts.string() + "': " + error.message());
  return WriteFileAtomically((hosts / (host + ".json")).string(),
                             HostFactsToJson(host, facts).dump(2) + "\n");
}

}  // namespace hvdrun
