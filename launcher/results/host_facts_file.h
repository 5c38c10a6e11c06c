// The per-host files of a results directory (docs/results.md): DIR/hosts/<host>.json holds the facts
// that host's agent gathered, in their JSON form (common/host/host_facts.h's HostFactsToJson), which
// hvdrun-lab reads (lab/host_facts.h). <host> is the host as -H or the hostfile names it,
// without a user. Written whole or not at all, like every results file.
#ifndef HVDRUN_LAUNCHER_RESULTS_HOST_FACTS_FILE_H_
#define HVDRUN_LAUNCHER_RESULTS_HOST_FACTS_FILE_H_

#include <string>
#include <vector>

#include "common/protocol/agent_protocol.h"
#include "hvdrun/status.h"

namespace hvdrun {

// Creates DIR/hosts and writes DIR/hosts/<host>.json. The error names the file.
Status WriteHostFactsFile(const std::string& dir, const std::string& host,
                          const std::vector<protocol::HostFact>& facts);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_RESULTS_HOST_FACTS_FILE_H_
