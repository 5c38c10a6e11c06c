#include "launcher/results/host_facts_file.h"

#include <filesystem>

#include "common/host/host_facts.h"
#include "launcher/results/results_writer.h"

namespace hvdrun {

Status WriteHostFactsFile(const std::string& dir, const std::string& host,
                          const std::vector<protocol::HostFact>& facts) {
  std::filesystem::path hosts = std::filesystem::path(dir) / "hosts";
  std::error_code error;
  std::filesystem::create_directories(hosts, error);
  if (error) return Status::Error("--results: cannot create '" + hosts.string() + "': " + error.message());
  return WriteResultsFile((hosts / (host + ".json")).string(), HostFactsToJson(host, facts).dump(2) + "\n");
}

}  // namespace hvdrun
