#include "tests/cluster/cluster_run.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <set>
#include <system_error>
#include <thread>

#include "tests/cluster/checked_command.h"
#include "tests/e2e/process_runner.h"

namespace hvdrun::cluster {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kRunIdPrefix = "hvdt";
// How long TeardownRun keeps killing processes that appear in a run's namespaces (a process can
// fork between being listed and being killed).
constexpr std::chrono::milliseconds kKillDeadline{5000};
constexpr std::chrono::milliseconds kKillRetryInterval{10};

// The length of the run of digits at the start of `text`.
size_t DigitsAt(std::string_view text) {
  size_t n = 0;
  while (n < text.size() && std::isdigit(static_cast<unsigned char>(text[n])) != 0) ++n;
  return n;
}

// Entry names of directory `dir`; none when it does not exist.
std::vector<std::string> EntriesOf(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    names.push_back(it->path().filename().string());
  }
  return names;
}

bool Exists(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0;
}

void Keep(Status* first, Status status) {
  if (first->ok() && !status.ok()) *first = std::move(status);
}

// SIGKILL to every process in `namespaces` until none is left or kKillDeadline passes.
Status KillEverythingIn(const std::string& run_id, const std::vector<std::string>& namespaces) {
  const auto deadline = std::chrono::steady_clock::now() + kKillDeadline;
  while (true) {
    std::vector<pid_t> pids;
    for (const std::string& netns : namespaces) {
      std::vector<pid_t> in_netns = PidsInNetns(netns);
      pids.insert(pids.end(), in_netns.begin(), in_netns.end());
    }
    if (pids.empty()) return Status::Ok();
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::Error("test cluster " + run_id + ": " + e2e::DescribeProcesses(pids) +
                           " still run in its namespaces " + std::to_string(kKillDeadline.count()) +
                           " ms after SIGKILL");
    }
    for (pid_t pid : pids) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(kKillRetryInterval);
  }
}

}  // namespace

std::string NewRunId() {
  static std::atomic<unsigned> runs{0};
  return std::string(kRunIdPrefix) + std::to_string(::getpid()) + "-" + std::to_string(++runs);
}

std::string RunIdOf(std::string_view name) {
  if (name.substr(0, kRunIdPrefix.size()) != kRunIdPrefix) return "";
  size_t pid_end = kRunIdPrefix.size() + DigitsAt(name.substr(kRunIdPrefix.size()));
  if (pid_end == kRunIdPrefix.size() || pid_end >= name.size() || name[pid_end] != '-') return "";
  size_t seq_digits = DigitsAt(name.substr(pid_end + 1));
  size_t end = pid_end + 1 + seq_digits;
  if (seq_digits == 0 || (end < name.size() && name[end] != '-')) return "";
  return std::string(name.substr(0, end));
}

pid_t RunOwner(std::string_view run_id) {
  if (RunIdOf(run_id) != run_id) return -1;
  std::string_view digits = run_id.substr(kRunIdPrefix.size());
  digits = digits.substr(0, digits.find('-'));
  if (digits.size() > 9) return -1;
  return static_cast<pid_t>(std::stol(std::string(digits)));
}

std::string NetnsName(const std::string& run_id, const std::string& host) { return run_id + "-" + host; }

std::string NetnsEtcDir(const std::string& netns) { return std::string(kNetnsEtcDir) + "/" + netns; }

std::string RunDir(const std::string& run_id) { return std::string(kClusterFilesDir) + "/" + run_id; }

std::vector<std::string> NamespacesOfRun(const std::string& run_id) {
  std::vector<std::string> namespaces;
  for (std::string& name : EntriesOf(kNetnsRunDir)) {
    if (name != run_id && RunIdOf(name) == run_id) namespaces.push_back(std::move(name));
  }
  std::sort(namespaces.begin(), namespaces.end());
  return namespaces;
}

std::vector<pid_t> PidsInNetns(const std::string& netns) {
  struct stat target {};
  if (::stat((std::string(kNetnsRunDir) + "/" + netns).c_str(), &target) != 0) return {};
  std::vector<pid_t> pids;
  for (const std::string& entry : EntriesOf("/proc")) {
    if (entry.empty() || DigitsAt(entry) != entry.size()) continue;
    struct stat info {};
    if (::stat(("/proc/" + entry + "/ns/net").c_str(), &info) != 0) continue;
    if (info.st_dev == target.st_dev && info.st_ino == target.st_ino) {
      pids.push_back(static_cast<pid_t>(std::stol(entry)));
    }
  }
  std::sort(pids.begin(), pids.end());
  return pids;
}

Status TeardownRun(const std::string& run_id) {
  if (RunOwner(run_id) < 0) return Status::Error("test cluster: '" + run_id + "' is not a run id");
  std::vector<std::string> namespaces = NamespacesOfRun(run_id);
  Status first = KillEverythingIn(run_id, namespaces);

  std::string ip = FindProgram("ip");
  for (const std::string& netns : namespaces) {
    if (ip.empty()) {
      Keep(&first, Status::Error("test cluster " + run_id + ": cannot delete namespace " + netns +
                                 ": 'ip' not found (Debian package iproute2)"));
      break;
    }
    StatusOr<std::string> deleted = RunChecked({ip, "netns", "delete", netns});
    // Another removal of the same run may have deleted it first.
    if (!deleted.ok() && Exists(std::string(kNetnsRunDir) + "/" + netns)) Keep(&first, deleted.status());
  }

  std::vector<std::string> paths;
  for (const std::string& name : EntriesOf(kNetnsEtcDir)) {
    if (RunIdOf(name) == run_id) paths.push_back(NetnsEtcDir(name));
  }
  paths.push_back(RunDir(run_id));
  for (const std::string& path : paths) {
    std::error_code error;
    fs::remove_all(path, error);
    if (error && Exists(path)) {
      Keep(&first,
           Status::Error("test cluster " + run_id + ": cannot remove " + path + ": " + error.message()));
    }
  }
  return first;
}

Status RemoveStaleRuns(std::vector<std::string>* removed) {
  std::set<std::string> run_ids;
  for (const char* dir : {kNetnsRunDir, kNetnsEtcDir, kClusterFilesDir}) {
    for (const std::string& name : EntriesOf(dir)) {
      std::string run_id = RunIdOf(name);
      if (!run_id.empty()) run_ids.insert(run_id);
    }
  }
  Status first;
  for (const std::string& run_id : run_ids) {
    if (e2e::IsRunning(RunOwner(run_id))) continue;
    Keep(&first, TeardownRun(run_id));
    if (removed != nullptr) removed->push_back(run_id);
  }
  return first;
}

}  // namespace hvdrun::cluster
