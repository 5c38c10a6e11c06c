#include "lab/host_facts.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "common/command_output.h"
#include "lab/whole_file.h"

namespace hvdrun::lab {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::milliseconds kProbeTimeout{10'000};

std::string Trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r\n\"");
  size_t end = text.find_last_not_of(" \t\r\n\"");
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

std::string ReadOr(const std::string& path, const std::string& fallback = "") {
  StatusOr<std::string> text = ReadWholeFile(path);
  return text.ok() ? text.value() : fallback;
}

// The first of `paths` that can be read, with its text.
std::pair<std::string, std::string> FirstReadable(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    StatusOr<std::string> text = ReadWholeFile(path);
    if (text.ok()) return {path, text.value()};
  }
  return {"", ""};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!Trim(line).empty()) lines.push_back(Trim(line));
  }
  return lines;
}

Fact ProbeOs() {
  for (const std::string& line : Lines(ReadOr("/etc/os-release"))) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) return {Trim(line.substr(12)), "/etc/os-release"};
  }
  return {"not found", "/etc/os-release has no PRETTY_NAME"};
}

Fact ProbeKernel() {
  utsname name{};
  if (::uname(&name) != 0) return {"not found", "uname failed"};
  return {std::string(name.sysname) + " " + name.release + " " + name.machine, "uname"};
}

Fact ProbeCpu() {
  std::vector<std::string> models;
  for (const std::string& line : Lines(ReadOr("/proc/cpuinfo"))) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      models.push_back(Trim(line.substr(line.find(':') + 1)));
    }
  }
  if (models.empty()) return {"not found", "/proc/cpuinfo has no model name"};
  return {CountedList(models) + " (logical CPUs)", "/proc/cpuinfo"};
}

// A PCI vendor:device pair as "vvvv:dddd" of `device_dir` or, for a device on another bus (virtio),
// of its parent; empty when neither is a PCI device.
std::string PciId(const fs::path& device_dir) {
  for (const fs::path& dir : {device_dir, device_dir.parent_path()}) {
    std::error_code error;
    if (fs::read_symlink(dir / "subsystem", error).filename() != "pci") continue;
    std::string vendor = Trim(ReadOr((dir / "vendor").string()));
    std::string device = Trim(ReadOr((dir / "device").string()));
    if (vendor.rfind("0x", 0) == 0 && device.rfind("0x", 0) == 0) {
      return vendor.substr(2) + ":" + device.substr(2);
    }
  }
  return "";
}

Fact ProbeNics() {
  std::vector<std::string> models;
  std::vector<std::string> names;
  std::error_code error;
  std::vector<fs::path> interfaces;
  for (const fs::directory_entry& entry : fs::directory_iterator("/sys/class/net", error)) {
    interfaces.push_back(entry.path());
  }
  std::sort(interfaces.begin(), interfaces.end());
  for (const fs::path& interface : interfaces) {
    // Virtual interfaces (lo, bridges, veths, ifb) have no device.
    fs::path device = interface / "device";
    if (!fs::exists(device, error)) continue;
    std::string driver;
    for (const std::string& line : Lines(ReadOr((device / "uevent").string()))) {
      if (line.rfind("DRIVER=", 0) == 0) driver = line.substr(7);
    }
    fs::path resolved = fs::canonical(device, error);
    std::string pci = error ? "" : PciId(resolved);
    std::string model = driver.empty() ? "unknown driver" : driver;
    if (!pci.empty()) model += " (PCI " + pci + ")";
    models.push_back(model);
    names.push_back(interface.filename().string());
  }
  if (models.empty()) return {"none found", "/sys/class/net: no interface with a device"};
  std::string listed;
  for (const std::string& name : names) listed += (listed.empty() ? "" : ", ") + name;
  return {CountedList(models), "/sys/class/net (" + listed + ")"};
}

struct GpuProbe {
  Fact gpus;
  Fact driver;
  Fact connection;
  int count = 0;
};

GpuProbe ProbeGpus() {
  GpuProbe probe;
  StatusOr<std::string> smi = CaptureOutput(
      {"nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"}, kProbeTimeout);
  if (smi.ok() && !Lines(smi.value()).empty()) {
    std::vector<std::string> models;
    std::string driver;
    for (const std::string& line : Lines(smi.value())) {
      size_t comma = line.rfind(',');
      models.push_back(Trim(line.substr(0, comma)));
      if (comma != std::string::npos) driver = Trim(line.substr(comma + 1));
    }
    probe.count = static_cast<int>(models.size());
    probe.gpus = {CountedList(models), "nvidia-smi --query-gpu=name"};
    probe.driver = {"NVIDIA " + driver, "nvidia-smi --query-gpu=driver_version"};
  } else {
    std::vector<std::string> models;
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator("/proc/driver/nvidia/gpus", error)) {
      for (const std::string& line : Lines(ReadOr((entry.path() / "information").string()))) {
        if (line.rfind("Model:", 0) == 0) models.push_back(Trim(line.substr(6)));
      }
    }
    probe.count = static_cast<int>(models.size());
    std::string why = smi.ok() ? "nvidia-smi listed no GPU" : smi.status().message();
    probe.gpus = models.empty() ? Fact{"none found", why + "; no /proc/driver/nvidia/gpus"}
                                : Fact{CountedList(models), "/proc/driver/nvidia/gpus"};
    std::vector<std::string> version = Lines(ReadOr("/proc/driver/nvidia/version"));
    probe.driver = version.empty() ? Fact{"none found", "no /proc/driver/nvidia/version"}
                                   : Fact{version[0], "/proc/driver/nvidia/version"};
  }
  if (probe.count == 0) {
    probe.connection = {"no GPU", probe.gpus.source};
  } else if (probe.count == 1) {
    probe.connection = {"one GPU: no GPU-to-GPU link", probe.gpus.source};
  } else {
    StatusOr<std::string> topology = CaptureOutput({"nvidia-smi", "topo", "-m"}, kProbeTimeout);
    if (!topology.ok()) {
      probe.connection = {"not found", topology.status().message()};
    } else {
      bool nvlink = std::regex_search(topology.value(), std::regex(R"(\bNV[0-9]+\b)"));
      probe.connection = {nvlink ? "NVLink" : "PCIe (no NVLink between GPUs)", "nvidia-smi topo -m"};
    }
  }
  return probe;
}

Fact ProbeCuda() {
  auto [path, text] = FirstReadable({"/usr/local/cuda/include/cuda.h", "/usr/include/cuda.h"});
  std::string version = DefineValue(text, "CUDA_VERSION");
  if (version.empty()) return {"not installed", "no cuda.h in /usr/local/cuda/include or /usr/include"};
  int number = std::atoi(version.c_str());
  return {"CUDA " + std::to_string(number / 1000) + "." + std::to_string(number % 1000 / 10), path};
}

Fact ProbeNccl() {
  auto [path, text] =
      FirstReadable({"/usr/local/cuda/include/nccl.h", "/usr/include/nccl.h", "/usr/local/include/nccl.h"});
  std::string major = DefineValue(text, "NCCL_MAJOR");
  if (major.empty()) {
    return {"not installed", "no nccl.h in /usr/local/cuda/include, /usr/include, /usr/local/include"};
  }
  return {"NCCL " + major + "." + DefineValue(text, "NCCL_MINOR") + "." + DefineValue(text, "NCCL_PATCH"),
          path};
}

Fact ProbeMpi() {
  StatusOr<std::string> output = CaptureOutput({"mpirun", "--version"}, kProbeTimeout);
  if (!output.ok()) return {"not installed", output.status().message()};
  std::vector<std::string> lines = Lines(output.value());
  if (lines.empty()) return {"not found", "mpirun --version printed nothing"};
  return {lines[0], "mpirun --version"};
}

Fact ProbeFramework() {
  auto [path, text] = FirstReadable({"/usr/include/torch/csrc/api/include/torch/version.h",
                                     "/usr/local/include/torch/csrc/api/include/torch/version.h"});
  std::string major = DefineValue(text, "TORCH_VERSION_MAJOR");
  if (major.empty()) return {"not installed", "no libtorch headers (torch/version.h)"};
  return {"libtorch " + major + "." + DefineValue(text, "TORCH_VERSION_MINOR") + "." +
              DefineValue(text, "TORCH_VERSION_PATCH"),
          path};
}

}  // namespace

std::string DefineValue(const std::string& header_text, const std::string& name) {
  std::regex define("^[ \t]*#[ \t]*define[ \t]+" + name + "[ \t]+([^ \t\r\n/]+)");
  std::smatch match;
  std::istringstream in(header_text);
  std::string line;
  while (std::getline(in, line)) {
    if (std::regex_search(line, match, define)) return match[1].str();
  }
  return "";
}

std::string CountedList(const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, int>> counted;
  for (const std::string& name : names) {
    auto it =
        std::find_if(counted.begin(), counted.end(), [&](const auto& entry) { return entry.first == name; });
    if (it == counted.end()) {
      counted.emplace_back(name, 1);
    } else {
      ++it->second;
    }
  }
  std::string out;
  for (const auto& [name, count] : counted) {
    out += (out.empty() ? "" : ", ") + std::to_string(count) + " × " + name;
  }
  return out;
}

HostFacts ProbeLocalHost() {
  HostFacts host;
  char name[256] = {};
  host.host = ::gethostname(name, sizeof(name) - 1) == 0 ? name : "localhost";
  GpuProbe gpus = ProbeGpus();
  host.gpu_count = gpus.count;
  host.facts = {{"nics", ProbeNics()}, {"gpus", gpus.gpus},         {"gpu_connection", gpus.connection},
                {"os", ProbeOs()},     {"gpu_driver", gpus.driver}, {"framework", ProbeFramework()},
                {"cuda", ProbeCuda()}, {"nccl", ProbeNccl()},       {"mpi", ProbeMpi()},
                {"cpu", ProbeCpu()},   {"kernel", ProbeKernel()}};
  return host;
}

MachineFacts MachineFactsOf(const HostFacts& host) {
  MachineFacts machine;
  machine.gpus = host.gpu_count;
  auto gpus = host.facts.find("gpus");
  machine.gpus_source = gpus != host.facts.end() ? gpus->second.source : "not probed";
  return machine;
}

nlohmann::json HostFactsToJson(const HostFacts& host) {
  nlohmann::json facts = nlohmann::json::object();
  for (const auto& [key, fact] : host.facts) facts[key] = {{"value", fact.value}, {"source", fact.source}};
  return {{"host", host.host}, {"gpu_count", host.gpu_count}, {"facts", facts}};
}

StatusOr<HostFacts> HostFactsFromJson(const nlohmann::json& json, const std::string& source) {
  if (!json.is_object()) return Status::Error("not a JSON object");
  HostFacts host;
  if (json.contains("host") && json["host"].is_string()) host.host = json["host"].get<std::string>();
  if (json.contains("gpu_count") && json["gpu_count"].is_number_integer()) {
    host.gpu_count = json["gpu_count"].get<int>();
  }
  // Facts under "facts", or at the top level (a flatter file from another tool).
  const nlohmann::json& facts = json.contains("facts") && json["facts"].is_object() ? json["facts"] : json;
  for (const char* key : kFactKeys) {
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
  // The kinds an interface without a device reports instead of a driver (agent/host_probe.cc).
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
