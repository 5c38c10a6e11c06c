// ProbeHostFacts: what hvdrun knows about a machine — OS, kernel, CPU, memory, NICs, GPUs and how
// they are connected, drivers, MPI, Gloo, NCCL, CUDA and framework versions — each with where it
// was read. One probe for both users: hvdrun-agent sends them to hvdrun (`hvdrun --check`,
// `--results DIR/hosts/<host>.json`, docs/results.md), and hvdrun-lab keeps them as
// environment.json and shows them in its environment table (docs/lab.md).
//
// Facts come from files (/etc/os-release, /proc/cpuinfo, /proc/meminfo, /sys/class/net,
// /proc/driver/nvidia, CUDA, NCCL and libtorch headers, NCCL's library, a bundle's bundle.env), from
// NCCL itself (ncclGetVersion of the library, loaded for the call) and from programs (`nvidia-smi`,
// `mpirun --version`, `dpkg-query`), each run by CaptureOutput and bounded by kFactCommandTimeout.
//
// "Missing": a fact that cannot be found has the value kFactNotFound ("not found") — whatever it is:
// no GPU, no MPI, an unreadable /etc/os-release — and its source says where it was looked for and
// why it is not there; gpu_count is then "0". A fact found in part leaves out what is missing
// ("8 logical cores" with no CPU model; "speed unknown" for a NIC's link speed).
//
// Thread-safe (each call reads the files anew and runs its own children); it takes up to a few
// seconds when a program is slow, up to kFactCommandTimeout per program.
#ifndef HVDRUN_COMMON_HOST_HOST_FACTS_H_
#define HVDRUN_COMMON_HOST_HOST_FACTS_H_

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/protocol/agent_protocol.h"

namespace hvdrun {

// Every key ProbeHostFacts gives, in its order.
inline constexpr const char* kHostFactKeys[] = {
    "hostname",        // gethostname()
    "os",              // PRETTY_NAME of /etc/os-release
    "kernel",          // "Linux <release> <machine>" from uname
    "cpu",             // "<model name>, <N> logical cores"
    "memory",          // MemTotal, as "N.N GiB"
    "nics",            // DescribeNic of each interface but lo, joined by "; "
    "gpus",            // CountedList of the models: "2 × NVIDIA H100 80GB HBM3"
    "gpu_count",       // a whole number; "0" when there is none
    "gpu_connection",  // "NVLink", "PCIe (no NVLink between GPUs)", or "one GPU: no GPU-to-GPU link"
    "gpu_driver",      // "NVIDIA 550.54.15"
    "mpi",             // first line of `mpirun --version`
    "gloo",            // "Gloo <version>" of the bundle's own, or of the libgloo-dev (libgloo0) package
    "nccl",            // "NCCL 2.21.5", as the library says (ncclGetVersion) where it loads
    "cuda",            // "CUDA 12.4"
    "framework",       // "libtorch 1.13.0", from the installed libtorch headers
};

// The value of a fact that cannot be found (see the contract above).
inline constexpr const char* kFactNotFound = "not found";

// A program may take this long before it counts as absent; nvidia-smi on a busy host is the slow one.
inline constexpr std::chrono::milliseconds kFactCommandTimeout{5000};

// One fact per key of kHostFactKeys, in that order, every value non-empty.
std::vector<protocol::HostFact> ProbeHostFacts();

// The number the "gpu_count" fact holds; 0 when there is none or it is not a whole number.
int GpuCountOf(const std::vector<protocol::HostFact>& facts);

// One host's facts in their JSON form, that of hvdrun's DIR/hosts/<host>.json (docs/results.md) and
// of hvdrun-lab's environment.json: {"host", "gpu_count", "facts": {key: {"value", "source"}}}.
nlohmann::json HostFactsToJson(const std::string& host, const std::vector<protocol::HostFact>& facts);

// The "gloo" and "nccl" facts of a program that runs from `bundle` (a relocatable bundle's folder,
// packaging/bundle; "" for one installed otherwise), what hvdrun uses first: the bundle's own Gloo
// (share/hvdrun/bundle.env), and the version that the NCCL library hvdrun --nccl loads reports
// (ncclGetVersion of the bundle's lib/libnccl.so.2, else of the dynamic linker's libnccl.so.2);
// then what the machine's packages, headers and file names say. ProbeHostFacts passes the bundle
// it runs from.
protocol::HostFact ProbeGloo(const std::string& bundle);
protocol::HostFact ProbeNccl(const std::string& bundle);

// Helpers of the probe, exposed for tests.
// "eth0 10.0.0.1/24, 10000 Mb/s, virtio_net": one interface's entry of the "nics" fact. `speed_text`
// is /sys/class/net/<nic>/speed (Mb/s); anything but a positive number is "speed unknown".
std::string DescribeNic(const std::string& name, const std::vector<std::string>& addresses,
                        const std::string& speed_text, const std::string& driver);
// The value of `#define NAME VALUE` in header text; empty when absent.
std::string DefineValue(const std::string& header_text, const std::string& name);
// "2 × A, 1 × B": identical names counted, in first-seen order.
std::string CountedList(const std::vector<std::string>& names);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_HOST_HOST_FACTS_H_
