// HostFacts: one host's facts as hvdrun-lab keeps and reads them — what ProbeHostFacts
// (common/host/host_facts.h, which also says how a fact that cannot be found reads) gives, by key — and
// their JSON form.
//
// ProbeLocalHost reads them on the machine hvdrun-lab runs on. The JSON form (ToJson, over
// common/host/host_facts.h's HostFactsToJson) is environment.json's, and the form of hvdrun's per-host files
// (hosts/*.json, launcher/results/host_facts_file.h) that hvdrun-lab reads; there a fact may also be a plain
// string.
#ifndef HVDRUN_LAB_HOST_FACTS_H_
#define HVDRUN_LAB_HOST_FACTS_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/protocol/agent_protocol.h"
#include "hvdrun/status.h"
#include "lab/experiment/matrix.h"

namespace hvdrun::lab {

struct Fact {
  std::string value;
  std::string source;  // a file, a command, or why it is not found
};

struct HostFacts {
  std::string host;                   // the host's name
  std::map<std::string, Fact> facts;  // by the keys of kHostFactKeys
  int gpu_count = 0;
};

// This machine's facts, with its host name ("localhost" when that is not found).
HostFacts ProbeLocalHost();
// The facts ProbeHostFacts gives, as the lab keeps them.
HostFacts HostFactsOf(const std::vector<protocol::HostFact>& facts);

// What cells may use on this machine, from its facts.
MachineFacts MachineFactsOf(const HostFacts& host);

// The JSON form, with the lab's gpu_count (as kept, also for facts read from a file without the fact).
// The JSON form, gpu_count as kept (also for facts read from a file that lacked the fact).
nlohmann::json ToJson(const HostFacts& host);
// `source` is used for facts given as plain strings. Keys that are not kHostFactKeys' are ignored.
StatusOr<HostFacts> HostFactsFromJson(const nlohmann::json& json, const std::string& source);

// The lab's "NIC model and count" from the "nics" fact, a list of every interface but lo ("eth0
// 10.0.0.1/24, 10000 Mb/s, mlx5_core; veth1 (no address), 10000 Mb/s, virtual"): the physical ones
// counted by driver and speed ("2 × mlx5_core (100000 Mb/s)"), virtual ones (veth, bridge, vlan,
// bond, ...) left out. Any other text (an older hvdrun-lab's own list, "not found") is returned
// unchanged.
std::string NicModels(const std::string& nics);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_HOST_FACTS_H_
