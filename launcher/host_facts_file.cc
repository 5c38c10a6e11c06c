#include "launcher/host_facts_file.h"

#include <filesystem>
#include <limits>

#include "common/whole_number.h"
#include "launcher/results_writer.h"

namespace hvdrun {

nlohmann::json HostFactsToJson(const std::string& host, const std::vector<protocol::HostFact>& facts) {
  nlohmann::json by_key = nlohmann::json::object();
  int gpu_count = 0;
  for (const protocol::HostFact& fact : facts) {
    by_key[fact.key] = {{"value", fact.value}, {"source", fact.source}};
    if (fact.key != "gpu_count") continue;
    const ParsedWholeNumber count = ParseWholeNumber(fact.value, 0, std::numeric_limits<int>::max());
    gpu_count = count.ok() ? static_cast<int>(count.value) : 0;
  }
  return {{"host", host}, {"gpu_count", gpu_count}, {"facts", by_key}};
}

Status WriteHostFactsFile(const std::string& dir, const std::string& host,
                          const std::vector<protocol::HostFact>& facts) {
  std::filesystem::path hosts = std::filesystem::path(dir) / "hosts";
  std::error_code error;
  std::filesystem::create_directories(hosts, error);
  if (error) return Status::Error("--results: cannot create '" + hosts.string() + "': " + error.message());
  return WriteResultsFile((hosts / (host + ".json")).string(), HostFactsToJson(host, facts).dump(2) + "\n");
}

}  // namespace hvdrun
