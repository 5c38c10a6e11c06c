#include "common/host/host_facts.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "common/process/command_output.h"
#include "common/whole_number.h"

namespace hvdrun {
namespace {

namespace fs = std::filesystem;
using protocol::HostFact;

HostFact NotFound(const std::string& key, const std::string& why) { return {key, kFactNotFound, why}; }

std::string Trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r\n\"");
  size_t end = text.find_last_not_of(" \t\r\n\"");
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

// The whole file, or "" when it cannot be read.
std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return in ? text.str() : "";
}

// The non-empty lines of `text`, trimmed.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!Trim(line).empty()) lines.push_back(Trim(line));
  }
  return lines;
}

// The value after `key` and a ':' or '=' on the first line that starts with `key`; "" if none.
std::string Field(const std::string& text, const std::string& key) {
  for (const std::string& line : Lines(text)) {
    if (line.rfind(key, 0) != 0) continue;
    size_t separator = line.find_first_of(":=", key.size());
    if (separator != std::string::npos && Trim(line.substr(key.size(), separator - key.size())).empty()) {
      return Trim(line.substr(separator + 1));
    }
  }
  return "";
}

// The first file of `paths` that can be read, with its text; {"", ""} when none can.
std::pair<std::string, std::string> FirstReadable(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    std::string text = ReadText(path);
    if (!text.empty()) return {path, text};
  }
  return {"", ""};
}

HostFact ProbeHostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return NotFound("hostname", "gethostname failed");
  return {"hostname", name, "gethostname"};
}

HostFact ProbeOs() {
  std::string name = Field(ReadText("/etc/os-release"), "PRETTY_NAME");
  if (name.empty()) return NotFound("os", "/etc/os-release has no PRETTY_NAME");
  return {"os", name, "/etc/os-release"};
}

HostFact ProbeKernel() {
  utsname name{};
  if (::uname(&name) != 0) return NotFound("kernel", "uname failed");
  return {"kernel", std::string(name.sysname) + " " + name.release + " " + name.machine, "uname"};
}

HostFact ProbeCpu() {
  std::string model = Field(ReadText("/proc/cpuinfo"), "model name");
  int64_t cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  std::string count = std::to_string(cores) + " logical cores";
  if (model.empty() && cores <= 0) return NotFound("cpu", "/proc/cpuinfo has no model name; sysconf failed");
  if (model.empty()) return {"cpu", count, "sysconf(_SC_NPROCESSORS_ONLN); /proc/cpuinfo has no model name"};
  if (cores <= 0) return {"cpu", model, "/proc/cpuinfo; sysconf(_SC_NPROCESSORS_ONLN) failed"};
  return {"cpu", model + ", " + count, "/proc/cpuinfo, sysconf(_SC_NPROCESSORS_ONLN)"};
}

HostFact ProbeMemory() {
  std::string total = Field(ReadText("/proc/meminfo"), "MemTotal");  // "131072000 kB"
  if (total.empty()) return NotFound("memory", "/proc/meminfo has no MemTotal");
  double gib = std::strtod(total.c_str(), nullptr) / (1024.0 * 1024.0);
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GiB", gib);
  return {"memory", text, "/proc/meminfo"};
}

// "addr/prefix" of each address of each interface, by interface name.
std::map<std::string, std::vector<std::string>> InterfaceAddresses() {
  std::map<std::string, std::vector<std::string>> addresses;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return addresses;
  for (ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_netmask == nullptr) continue;
    int family = entry->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const auto* mask_bytes = reinterpret_cast<const unsigned char*>(
        family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(entry->ifa_netmask)->sin_addr)
            : static_cast<const void*>(
                  &reinterpret_cast<const sockaddr_in6*>(entry->ifa_netmask)->sin6_addr));
    const void* address =
        family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(entry->ifa_addr)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(entry->ifa_addr)->sin6_addr);
    if (::inet_ntop(family, address, text, sizeof(text)) == nullptr) continue;
    int prefix = 0;
    for (size_t i = 0; i < (family == AF_INET ? 4u : 16u); ++i) prefix += __builtin_popcount(mask_bytes[i]);
    addresses[entry->ifa_name].push_back(std::string(text) + "/" + std::to_string(prefix));
  }
  ::freeifaddrs(list);
  return addresses;
}

HostFact ProbeNics() {
  std::map<std::string, std::vector<std::string>> addresses = InterfaceAddresses();
  std::vector<std::string> names;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator("/sys/class/net", error)) {
    if (entry.path().filename() != "lo") names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  std::string value;
  for (const std::string& name : names) {
    fs::path dir = fs::path("/sys/class/net") / name;
    std::string driver = fs::read_symlink(dir / "device" / "driver", error).filename().string();
    if (error) {
      // Virtual interfaces (veth, bridges) have no device; their kind is in uevent's DEVTYPE.
      std::string kind = Field(ReadText((dir / "uevent").string()), "DEVTYPE");
      driver = kind.empty() ? "virtual" : kind;
    }
    value += (value.empty() ? "" : "; ") +
             DescribeNic(name, addresses[name], Trim(ReadText((dir / "speed").string())), driver);
  }
  if (value.empty()) return NotFound("nics", "/sys/class/net lists only lo");
  return {"nics", value, "/sys/class/net, getifaddrs"};
}

struct GpuFacts {
  HostFact gpus;
  int count = 0;
  HostFact connection;
  HostFact driver;
};

// From nvidia-smi; where it cannot answer, from the kernel driver's /proc/driver/nvidia.
GpuFacts ProbeGpus() {
  GpuFacts facts;
  StatusOr<std::string> smi = CaptureOutput(
      {"nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"}, kFactCommandTimeout);
  std::vector<std::string> models;
  if (smi.ok()) {
    std::string driver;
    for (const std::string& line : Lines(smi.value())) {
      size_t comma = line.rfind(',');
      models.push_back(Trim(line.substr(0, comma)));
      if (comma != std::string::npos) driver = Trim(line.substr(comma + 1));
    }
    if (!models.empty()) {
      std::string source = "nvidia-smi --query-gpu=name,driver_version";
      facts.gpus = {"gpus", CountedList(models), source};
      facts.driver = driver.empty() ? NotFound("gpu_driver", "nvidia-smi named no driver version")
                                    : HostFact{"gpu_driver", "NVIDIA " + driver, source};
    }
  }
  if (models.empty()) {
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator("/proc/driver/nvidia/gpus", error)) {
      std::string model = Field(ReadText((entry.path() / "information").string()), "Model");
      if (!model.empty()) models.push_back(model);
    }
    std::string why = smi.ok() ? "nvidia-smi listed no GPU" : smi.status().message();
    facts.gpus = models.empty()
                     ? NotFound("gpus", why + "; no /proc/driver/nvidia/gpus")
                     : HostFact{"gpus", CountedList(models), "/proc/driver/nvidia/gpus (" + why + ")"};
    std::vector<std::string> version = Lines(ReadText("/proc/driver/nvidia/version"));
    facts.driver = version.empty() ? NotFound("gpu_driver", why + "; no /proc/driver/nvidia/version")
                                   : HostFact{"gpu_driver", version[0], "/proc/driver/nvidia/version"};
  }
  facts.count = static_cast<int>(models.size());
  if (facts.count == 0) {
    facts.connection = NotFound("gpu_connection", "no GPU: " + facts.gpus.source);
  } else if (facts.count == 1) {
    facts.connection = {"gpu_connection", "one GPU: no GPU-to-GPU link", facts.gpus.source};
  } else {
    StatusOr<std::string> topology = CaptureOutput({"nvidia-smi", "topo", "-m"}, kFactCommandTimeout);
    if (!topology.ok()) {
      facts.connection = NotFound("gpu_connection", topology.status().message());
    } else {
      bool nvlink = std::regex_search(topology.value(), std::regex(R"(\bNV[0-9]+\b)"));
      facts.connection = {"gpu_connection", nvlink ? "NVLink" : "PCIe (no NVLink between GPUs)",
                          "nvidia-smi topo -m"};
    }
  }
  return facts;
}

HostFact ProbeMpi() {
  StatusOr<std::string> output = CaptureOutput({"mpirun", "--version"}, kFactCommandTimeout);
  if (!output.ok()) return NotFound("mpi", output.status().message());
  std::vector<std::string> lines = Lines(output.value());
  if (lines.empty()) return NotFound("mpi", "'mpirun --version' printed nothing");
  return {"mpi", lines[0], "mpirun --version"};
}

// ncclGetVersion of the library `name` (a path, or a name for the dynamic linker), loaded for the
// call and closed again: "2.28.9", with where it was loaded from in `loaded_from`; "" when it cannot
// be loaded or has no ncclGetVersion, with why in `why`.
std::string NcclVersionOf(const std::string& name, std::string* loaded_from, std::string* why) {
  void* library = ::dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = ::dlerror();
    *why = error != nullptr ? error : name + ": cannot be loaded";
    return "";
  }
  std::string version;
  using GetVersion = int (*)(int*);
  void* symbol = ::dlsym(library, "ncclGetVersion");
  int code = 0;
  if (symbol == nullptr) {
    *why = name + " has no ncclGetVersion";
  } else if (reinterpret_cast<GetVersion>(symbol)(&code) != 0 || code <= 0) {
    *why = name + ": ncclGetVersion failed";
  } else {
    // NCCL_VERSION(X, Y, Z): X * 10000 + Y * 100 + Z since 2.9, X * 1000 + Y * 100 + Z before.
    const int major = code >= 10000 ? code / 10000 : code / 1000;
    const int minor = code >= 10000 ? code % 10000 / 100 : code % 1000 / 100;
    version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
    Dl_info info{};
    std::error_code error;
    *loaded_from = ::dladdr(symbol, &info) != 0 && info.dli_fname != nullptr
                       ? fs::canonical(info.dli_fname, error).string()
                       : name;
    if (loaded_from->empty()) *loaded_from = name;
  }
  ::dlclose(library);
  return version;
}

// The bundle (packaging/bundle) this program runs from: the folder above its own (bin/), or the one
// above that (libexec/hvdrun/), that holds share/hvdrun/bundle.env; "" when installed otherwise.
std::string BundleOfThisProgram() {
  std::error_code error;
  const fs::path program = fs::read_symlink("/proc/self/exe", error);
  if (error) return "";
  fs::path folder = program.parent_path();
  for (int up = 0; up < 2 && folder.has_parent_path(); ++up) {
    folder = folder.parent_path();
    if (fs::is_regular_file(folder / "share/hvdrun/bundle.env", error)) return folder.string();
  }
  return "";
}

HostFact ProbeCuda() {
  auto [path, header] = FirstReadable({"/usr/local/cuda/include/cuda.h", "/usr/include/cuda.h"});
  std::string version = DefineValue(header, "CUDA_VERSION");
  if (version.empty()) return NotFound("cuda", "no cuda.h in /usr/local/cuda/include or /usr/include");
  ParsedWholeNumber number = ParseWholeNumber(version, 0, 1'000'000);
  if (!number.ok()) return NotFound("cuda", path + ": CUDA_VERSION '" + version + "' is not a number");
  return {"cuda",
          "CUDA " + std::to_string(number.value / 1000) + "." + std::to_string(number.value % 1000 / 10),
          path};
}

HostFact ProbeFramework() {
  auto [path, header] = FirstReadable({"/usr/include/torch/csrc/api/include/torch/version.h",
                                       "/usr/local/include/torch/csrc/api/include/torch/version.h"});
  std::string major = DefineValue(header, "TORCH_VERSION_MAJOR");
  if (major.empty()) return NotFound("framework", "no libtorch headers (torch/version.h)");
  return {"framework",
          "libtorch " + major + "." + DefineValue(header, "TORCH_VERSION_MINOR") + "." +
              DefineValue(header, "TORCH_VERSION_PATCH"),
          path};
}

}  // namespace

std::string DescribeNic(const std::string& name, const std::vector<std::string>& addresses,
                        const std::string& speed_text, const std::string& driver) {
  std::string entry = name;
  for (const std::string& address : addresses) entry += " " + address;
  if (addresses.empty()) entry += " (no address)";
  // /sys/class/net/<nic>/speed: -1 or unreadable (EINVAL) when the link is down or virtual.
  ParsedWholeNumber speed = ParseWholeNumber(speed_text, 1, INT64_MAX);
  entry += speed.ok() ? ", " + std::to_string(speed.value) + " Mb/s" : ", speed unknown";
  return entry + ", " + driver;
}

std::string DefineValue(const std::string& header_text, const std::string& name) {
  std::regex define("^[ \t]*#[ \t]*define[ \t]+" + name + "[ \t]+([^ \t\r\n/]+)");
  std::smatch match;
  std::istringstream in(header_text);
  for (std::string line; std::getline(in, line);) {
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

HostFact ProbeGloo(const std::string& bundle) {
  // A bundle carries its own libgloo, and says which (packaging/bundle/build-bundle.sh).
  if (!bundle.empty()) {
    const std::string env = bundle + "/share/hvdrun/bundle.env";
    const std::string version = Field(ReadText(env), "HVDRUN_BUNDLE_GLOO");
    if (!version.empty()) return {"gloo", "Gloo " + version + " (the bundle's own)", env};
  }
  for (const char* package : {"libgloo-dev", "libgloo0"}) {
    StatusOr<std::string> version =
        CaptureOutput({"dpkg-query", "-W", "-f=${Version}", package}, kFactCommandTimeout);
    if (version.ok() && !Trim(version.value()).empty()) {
      return {"gloo", "Gloo " + Trim(version.value()), std::string("dpkg-query -W ") + package};
    }
  }
  return NotFound("gloo", "dpkg-query knows no libgloo-dev or libgloo0");
}

HostFact ProbeNccl(const std::string& bundle) {
  // The library hvdrun --nccl loads says its own version: a bundle's link to the machine's NCCL
  // (hvdrun-setup makes it), else the libnccl.so.2 the dynamic linker finds.
  std::vector<std::string> libraries;
  if (!bundle.empty() && fs::exists(bundle + "/lib/libnccl.so.2")) {
    libraries.push_back(bundle + "/lib/libnccl.so.2");
  }
  libraries.push_back("libnccl.so.2");
  std::string why;
  for (const std::string& library : libraries) {
    std::string loaded_from;
    const std::string version = NcclVersionOf(library, &loaded_from, &why);
    if (!version.empty()) return {"nccl", "NCCL " + version, loaded_from + " (ncclGetVersion)"};
  }
  auto [path, header] =
      FirstReadable({"/usr/local/cuda/include/nccl.h", "/usr/include/nccl.h", "/usr/local/include/nccl.h"});
  std::string major = DefineValue(header, "NCCL_MAJOR");
  if (!major.empty()) {
    return {
        "nccl",
        "NCCL " + major + "." + DefineValue(header, "NCCL_MINOR") + "." + DefineValue(header, "NCCL_PATCH"),
        path};
  }
  // A runtime-only install: the version is in the library's file name (libnccl.so.2.21.5).
  std::error_code error;
  for (const char* dir :
       {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/local/cuda/lib64"}) {
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
      std::string name = entry.path().filename().string();
      if (name.rfind("libnccl.so.", 0) == 0 && std::count(name.begin(), name.end(), '.') == 4) {
        return {"nccl", "NCCL " + name.substr(11), entry.path().string()};
      }
    }
  }
  return NotFound("nccl", "no libnccl.so.2 to load (" + why + "), no nccl.h and no libnccl.so.X.Y.Z");
}

std::vector<HostFact> ProbeHostFacts() {
  std::vector<HostFact> facts = {ProbeHostname(), ProbeOs(),     ProbeKernel(),
                                 ProbeCpu(),      ProbeMemory(), ProbeNics()};
  GpuFacts gpus = ProbeGpus();
  HostFact count{"gpu_count", std::to_string(gpus.count), gpus.gpus.source};
  facts.insert(facts.end(), {gpus.gpus, count, gpus.connection, gpus.driver});
  const std::string bundle = BundleOfThisProgram();
  facts.insert(facts.end(),
               {ProbeMpi(), ProbeGloo(bundle), ProbeNccl(bundle), ProbeCuda(), ProbeFramework()});
  return facts;
}

int GpuCountOf(const std::vector<protocol::HostFact>& facts) {
  for (const protocol::HostFact& fact : facts) {
    if (fact.key != "gpu_count") continue;
    ParsedWholeNumber count = ParseWholeNumber(fact.value, 0, 1 << 16);
    return count.ok() ? static_cast<int>(count.value) : 0;
  }
  return 0;
}

nlohmann::json HostFactsToJson(const std::string& host, const std::vector<protocol::HostFact>& facts) {
  nlohmann::json by_key = nlohmann::json::object();
  for (const protocol::HostFact& fact : facts) {
    by_key[fact.key] = {{"value", fact.value}, {"source", fact.source}};
  }
  return {{"host", host}, {"gpu_count", GpuCountOf(facts)}, {"facts", by_key}};
}

}  // namespace hvdrun
