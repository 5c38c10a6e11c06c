// ProbeHostFacts: what the agent tells the launcher about its host (for `hvdrun --check` and
// `--results DIR/hosts/<host>.json`), read on the host itself.
//
// Facts come from files (/etc/os-release, /proc/cpuinfo, /proc/meminfo, /sys/class/net, CUDA and
// NCCL headers and libraries) and, each bounded by kCommandTimeout, from programs (`nvidia-smi`,
// `mpirun --version`, `dpkg-query`). Every key of kHostFactKeys is always present, in that order; a
// fact that cannot be found says so in its value ("none", "not installed", "unknown") and why in
// its source. The keys that hvdrun-lab's environment table shows (lab/host_facts.h) share its names.
// Not thread-safe (it runs child processes and waits for them).
#ifndef HVDRUN_AGENT_HOST_PROBE_H_
#define HVDRUN_AGENT_HOST_PROBE_H_

#include <chrono>
#include <string>
#include <vector>

#include "common/agent_protocol.h"

namespace hvdrun {

inline constexpr const char* kHostFactKeys[] = {
    "hostname",      // gethostname()
    "os",            // PRETTY_NAME of /etc/os-release
    "kernel",        // "Linux <release> <machine>" from uname
    "cpu",           // "<model name>, <N> logical cores"
    "memory",        // MemTotal, as "N.N GiB"
    "nics",          // "<name> <addr/prefix>... <speed> <driver>" per interface but lo, joined by "; "
    "gpus",          // "2 × NVIDIA H100 80GB HBM3", or "none"
    "gpu_count",     // a whole number
    "gpu_driver",    // "NVIDIA 550.54.15", or "none"
    "mpi",           // first line of `mpirun --version`
    "gloo",          // the libgloo-dev (or libgloo0) Debian package version
    "nccl",          // "NCCL 2.21.5"
    "cuda",          // "CUDA 12.4"
    "hvdrun_agent",  // this agent's version
};

// A program may take this long before it counts as absent; nvidia-smi on a busy host is the slow one.
inline constexpr std::chrono::milliseconds kCommandTimeout{5000};

std::vector<protocol::HostFact> ProbeHostFacts();

// Helpers of the probe, exposed for tests.
// "eth0 10.0.0.1/24, 10000 Mb/s, virtio_net": one interface's entry of the "nics" fact.
std::string DescribeNic(const std::string& name, const std::vector<std::string>& addresses,
                        const std::string& speed_text, const std::string& driver);
// The standard output of `argv` (looked up in PATH; stderr discarded), or an error naming the
// program and why it failed: not found, exit status, or `timeout` passed (it is then killed).
StatusOr<std::string> CaptureCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

}  // namespace hvdrun

#endif  // HVDRUN_AGENT_HOST_PROBE_H_
