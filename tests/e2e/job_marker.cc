#include "tests/e2e/job_marker.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <memory>
#include <thread>

#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

// Every process whose environment holds `entry` (NAME=VALUE), found through /proc. A zombie has
// no environment any more and is not found.
std::vector<pid_t> ProcessesWithEnvironmentEntry(const std::string& entry) {
  std::vector<pid_t> found;
  std::unique_ptr<DIR, int (*)(DIR*)> proc(::opendir("/proc"), &::closedir);
  if (!proc) return found;
  while (dirent* item = ::readdir(proc.get())) {
    std::string name = item->d_name;
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(c) != 0; })) {
      continue;
    }
    std::string environment = ReadFileBytes("/proc/" + name + "/environ");
    size_t start = 0;
    while (start < environment.size()) {
      size_t end = environment.find('\0', start);
      if (end == std::string::npos) end = environment.size();
      if (environment.compare(start, end - start, entry) == 0) {
        found.push_back(static_cast<pid_t>(std::stol(name)));
        break;
      }
      start = end + 1;
    }
  }
  return found;
}

}  // namespace

JobMarker::JobMarker() {
  static std::atomic<int> counter{0};
  entry_ = "HVDRUN_E2E_MPI_JOB=" + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

JobMarker::~JobMarker() {
  for (pid_t pid : ProcessesWithEnvironmentEntry(entry_)) ::kill(pid, SIGKILL);
}

ProcessOptions JobMarker::Options(ProcessOptions options) const {
  options.extra_env.push_back(entry_);
  return options;
}

std::vector<pid_t> JobMarker::Running() const { return ProcessesWithEnvironmentEntry(entry_); }

std::vector<pid_t> JobMarker::WaitUntilNoneRuns(std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::vector<pid_t> running = ProcessesWithEnvironmentEntry(entry_);
    if (running.empty() || std::chrono::steady_clock::now() >= deadline) return running;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void JobMarker::ExpectNoneRunsWithin(std::chrono::milliseconds within) const {
  const std::vector<pid_t> left = WaitUntilNoneRuns(within);
  EXPECT_TRUE(left.empty()) << "outlived hvdrun: " << left.size() << " processes";
}

}  // namespace hvdrun::e2e
