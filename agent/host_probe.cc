#include "agent/host_probe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "common/file_descriptor.h"
#include "common/version.h"

extern char** environ;  // NOLINT(readability-identifier-naming): POSIX's name

namespace hvdrun {
namespace {

namespace fs = std::filesystem;
using protocol::HostFact;

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

// The value of `#define NAME VALUE` in header text; "" when absent.
std::string DefineValue(const std::string& header, const std::string& name) {
  std::smatch match;
  std::regex define("^[ \t]*#[ \t]*define[ \t]+" + name + "[ \t]+([^ \t\r\n/]+)");
  for (const std::string& line : Lines(header)) {
    if (std::regex_search(line, match, define)) return match[1].str();
  }
  return "";
}

HostFact ProbeHostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return {"hostname", "unknown", "gethostname failed"};
  return {"hostname", name, "gethostname"};
}

HostFact ProbeOs() {
  std::string name = Field(ReadText("/etc/os-release"), "PRETTY_NAME");
  if (name.empty()) return {"os", "unknown", "/etc/os-release has no PRETTY_NAME"};
  return {"os", name, "/etc/os-release"};
}

HostFact ProbeKernel() {
  utsname name{};
  if (::uname(&name) != 0) return {"kernel", "unknown", "uname failed"};
  return {"kernel", std::string(name.sysname) + " " + name.release + " " + name.machine, "uname"};
}

HostFact ProbeCpu() {
  std::string model = Field(ReadText("/proc/cpuinfo"), "model name");
  int64_t cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  std::string value =
      (model.empty() ? "unknown model" : model) + ", " + std::to_string(cores) + " logical cores";
  return {"cpu", value, "/proc/cpuinfo, sysconf(_SC_NPROCESSORS_ONLN)"};
}

HostFact ProbeMemory() {
  std::string total = Field(ReadText("/proc/meminfo"), "MemTotal");  // "131072000 kB"
  if (total.empty()) return {"memory", "unknown", "/proc/meminfo has no MemTotal"};
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
  if (value.empty()) return {"nics", "none", "/sys/class/net lists only lo"};
  return {"nics", value, "/sys/class/net, getifaddrs"};
}

std::vector<HostFact> ProbeGpus() {
  StatusOr<std::string> smi = CaptureCommand(
      {"nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"}, kCommandTimeout);
  std::vector<std::string> models;
  std::string driver;
  if (smi.ok()) {
    for (const std::string& line : Lines(smi.value())) {
      size_t comma = line.rfind(',');
      models.push_back(Trim(line.substr(0, comma)));
      if (comma != std::string::npos) driver = Trim(line.substr(comma + 1));
    }
  }
  if (models.empty()) {
    std::string why = smi.ok() ? "nvidia-smi listed no GPU" : smi.status().message();
    return {{"gpus", "none", why}, {"gpu_count", "0", why}, {"gpu_driver", "none", why}};
  }
  std::vector<std::pair<std::string, int>> counted;
  for (const std::string& model : models) {
    auto it = std::find_if(counted.begin(), counted.end(), [&](const auto& c) { return c.first == model; });
    if (it == counted.end()) {
      counted.emplace_back(model, 1);
    } else {
      ++it->second;
    }
  }
  std::string listed;
  for (const auto& [model, count] : counted) {
    listed += (listed.empty() ? "" : ", ") + std::to_string(count) + " × " + model;
  }
  std::string source = "nvidia-smi --query-gpu=name,driver_version";
  return {{"gpus", listed, source},
          {"gpu_count", std::to_string(models.size()), source},
          {"gpu_driver", "NVIDIA " + driver, source}};
}

HostFact ProbeMpi() {
  StatusOr<std::string> output = CaptureCommand({"mpirun", "--version"}, kCommandTimeout);
  if (!output.ok()) return {"mpi", "not installed", output.status().message()};
  std::vector<std::string> lines = Lines(output.value());
  if (lines.empty()) return {"mpi", "unknown", "mpirun --version printed nothing"};
  return {"mpi", lines[0], "mpirun --version"};
}

HostFact ProbeGloo() {
  for (const char* package : {"libgloo-dev", "libgloo0"}) {
    StatusOr<std::string> version =
        CaptureCommand({"dpkg-query", "-W", "-f=${Version}", package}, kCommandTimeout);
    if (version.ok() && !Trim(version.value()).empty()) {
      return {"gloo", "Gloo " + Trim(version.value()), std::string("dpkg-query -W ") + package};
    }
  }
  return {"gloo", "not installed", "dpkg-query knows no libgloo-dev or libgloo0"};
}

// The first file of `paths` that can be read, with its text.
std::pair<std::string, std::string> FirstReadable(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    std::string text = ReadText(path);
    if (!text.empty()) return {path, text};
  }
  return {"", ""};
}

HostFact ProbeNccl() {
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
  return {"nccl", "not installed", "no nccl.h and no libnccl.so.X.Y.Z"};
}

HostFact ProbeCuda() {
  auto [path, header] = FirstReadable({"/usr/local/cuda/include/cuda.h", "/usr/include/cuda.h"});
  std::string version = DefineValue(header, "CUDA_VERSION");
  if (version.empty()) {
    return {"cuda", "not installed", "no cuda.h in /usr/local/cuda/include or /usr/include"};
  }
  int number = std::atoi(version.c_str());
  return {"cuda", "CUDA " + std::to_string(number / 1000) + "." + std::to_string(number % 1000 / 10), path};
}

}  // namespace

std::string DescribeNic(const std::string& name, const std::vector<std::string>& addresses,
                        const std::string& speed_text, const std::string& driver) {
  std::string entry = name;
  for (const std::string& address : addresses) entry += " " + address;
  if (addresses.empty()) entry += " (no address)";
  // /sys/class/net/<nic>/speed: Mb/s; -1 or unreadable (EINVAL) when the link is down or virtual.
  char* end = nullptr;
  int64_t speed = std::strtoll(speed_text.c_str(), &end, 10);
  bool known = !speed_text.empty() && end != nullptr && *end == '\0' && speed > 0;
  entry += known ? ", " + std::to_string(speed) + " Mb/s" : ", speed unknown";
  return entry + ", " + driver;
}

StatusOr<std::string> CaptureCommand(const std::vector<std::string>& argv,
                                     std::chrono::milliseconds timeout) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Status::Error(argv[0] + ": pipe failed: " + std::strerror(errno));
  }
  UniqueFd read_end(pipe_fds[0]);
  UniqueFd write_end(pipe_fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int spawn_error = ::posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  write_end.Reset();
  if (spawn_error != 0) return Status::Error(argv[0] + " not found (" + std::strerror(spawn_error) + ")");

  std::string output;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  while (true) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fd{read_end.get(), POLLIN, 0};
    int ready = ::poll(&fd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;  // the deadline is checked above
    char buffer[4096];
    ssize_t n = ::read(read_end.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output.append(buffer, static_cast<size_t>(n));
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return Status::Error(argv[0] + " did not finish within " + std::to_string(timeout.count()) + " ms");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return Status::Error(argv[0] + " not found");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::Error(argv[0] + " failed (status " + std::to_string(status) + ")");
  }
  return output;
}

std::vector<HostFact> ProbeHostFacts() {
  std::vector<HostFact> facts = {ProbeHostname(), ProbeOs(),     ProbeKernel(),
                                 ProbeCpu(),      ProbeMemory(), ProbeNics()};
  for (HostFact& fact : ProbeGpus()) facts.push_back(std::move(fact));
  for (HostFact fact : {ProbeMpi(), ProbeGloo(), ProbeNccl(), ProbeCuda()}) facts.push_back(std::move(fact));
  facts.push_back({"hvdrun_agent", std::string("hvdrun-agent ") + kVersion, "built in"});
  return facts;
}

}  // namespace hvdrun
