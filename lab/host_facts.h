// HostFacts: what the environment table of a lab report says about a host — OS, NICs, GPUs and how
// they are connected, drivers, CUDA, NCCL, MPI and framework versions — each with where it was read.
//
// ProbeLocalHost reads them on the machine hvdrun-lab runs on, from files (/etc/os-release,
// /proc/cpuinfo, /sys/class/net, /proc/driver/nvidia, library headers) and, with a short timeout
// each, from `nvidia-smi` and `mpirun --version`. A fact that cannot be found says so ("not found")
// and why, in its source. The JSON form (HostFactsToJson) is environment.json's, and the form
// hvdrun-lab reads from hvdrun's per-host files (hosts/*.json) when hvdrun writes them; there a fact
// may also be a plain string.
#ifndef HVDRUN_LAB_HOST_FACTS_H_
#define HVDRUN_LAB_HOST_FACTS_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "lab/matrix.h"

namespace hvdrun::lab {

struct Fact {
  std::string value;
  std::string source;  // a file, a command, or why it is unknown
};

// The keys of HostFacts::facts, in the order of the lab's environment table.
inline constexpr const char* kFactKeys[] = {"nics",       "gpus",      "gpu_connection", "os",
                                            "gpu_driver", "framework", "cuda",           "nccl",
                                            "mpi",        "cpu",       "kernel"};

struct HostFacts {
  std::string host;  // the host's name
  std::map<std::string, Fact> facts;
  int gpu_count = 0;
};

HostFacts ProbeLocalHost();

// What cells may use on this machine, from its facts.
MachineFacts MachineFactsOf(const HostFacts& host);

nlohmann::json HostFactsToJson(const HostFacts& host);
// `source` is used for facts given as plain strings. Unknown keys are ignored.
StatusOr<HostFacts> HostFactsFromJson(const nlohmann::json& json, const std::string& source);

// Helpers of the probe, exposed for tests.
// The value of `#define NAME VALUE` in header text; empty when absent.
std::string DefineValue(const std::string& header_text, const std::string& name);
// "2 × A, 1 × B": identical names counted, in first-seen order.
std::string CountedList(const std::vector<std::string>& names);
// The lab's "NIC model and count" from the "nics" fact hvdrun's agent reports, a list of every
// interface but lo ("eth0 10.0.0.1/24, 10000 Mb/s, mlx5_core; veth1 (no address), 10000 Mb/s,
// virtual"): the physical ones counted by driver and speed ("2 × mlx5_core (100000 Mb/s)"),
// virtual ones (veth, bridge, vlan, bond, ...) left out. Any other text is returned unchanged.
std::string NicModels(const std::string& nics);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_HOST_FACTS_H_
