#include "tests/cluster/cluster_test.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/e2e/installed_program.h"

namespace hvdrun::cluster {
namespace {

// Without an ssh-agent, hvdrun and ssh log in with the keys the test names only.
e2e::ProcessOptions WithoutSshAgent() {
  e2e::ProcessOptions options;
  options.unset_env = {"SSH_AUTH_SOCK"};
  return options;
}

}  // namespace

TestCluster* ClusterTest::cluster_ = nullptr;
std::string* ClusterTest::create_error_ = nullptr;

std::string ProgramName(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

std::vector<pid_t> ProgramsIn(const std::vector<pid_t>& pids, const std::string& name) {
  std::vector<pid_t> found;
  for (pid_t pid : pids) {
    if (ProgramName(pid) == name) found.push_back(pid);
  }
  return found;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string StagedProgram(const std::string& name) { return e2e::InstalledProgram(name); }

std::vector<std::string> WithBindMount(const std::string& source, const std::string& target,
                                       const std::vector<std::string>& argv) {
  std::vector<std::string> wrapped = {"unshare",
                                      "--mount",
                                      "--propagation",
                                      "private",
                                      "--",
                                      "/bin/sh",
                                      "-c",
                                      "mount --bind \"$0\" \"$1\" && shift && exec \"$@\"",
                                      source,
                                      target};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

void ClusterTest::CreateCluster(int servers) {
  if (!TestCluster::UnusableReason().empty()) return;
  StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Create(servers);
  if (!cluster.ok()) {
    create_error_ = new std::string(cluster.status().message());
    return;
  }
  cluster_ = std::move(cluster).value().release();
}

void ClusterTest::TearDownTestSuite() {
  delete cluster_;
  cluster_ = nullptr;
  delete create_error_;
  create_error_ = nullptr;
}

void ClusterTest::SetUp() {
  if (std::string reason = TestCluster::UnusableReason(); !reason.empty()) GTEST_SKIP() << reason;
  ASSERT_EQ(create_error_, nullptr) << *create_error_;
  ASSERT_NE(cluster_, nullptr) << "the suite built no cluster (CreateCluster in its SetUpTestSuite)";
}

e2e::ProcessResult ClusterTest::RunInLauncher(const std::vector<std::string>& argv,
                                              std::chrono::milliseconds timeout) const {
  return c().Exec(c().launcher(), argv, timeout, WithoutSshAgent());
}

e2e::RunningProcess ClusterTest::StartInLauncher(const std::vector<std::string>& argv) const {
  return c().Start(c().launcher(), argv, WithoutSshAgent());
}

testing::AssertionResult ClusterTest::NotInPath(const ClusterHost& host, const std::string& program) const {
  // The shell's answer, or "-" when it finds nothing: ssh's own failures exit with 255.
  e2e::ProcessResult result = RunInLauncher(c().SshArgv(host, "command -v " + program + " || echo -"),
                                            std::chrono::milliseconds(15'000));
  std::vector<std::string> lines = Lines(result.stdout_text);
  if (result.exit_code != 0 || lines.empty()) {
    return testing::AssertionFailure() << "ssh to " << host.name << " failed: " << result;
  }
  if (lines.back() == "-") return testing::AssertionSuccess();
  return testing::AssertionFailure() << host.name << "'s PATH has " << program << " (" << lines.back()
                                     << "), which this test needs it without";
}

bool ClusterTest::WaitForPrograms(const std::string& program, size_t count,
                                  std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ProgramsIn(c().PidsInCluster(), program).size() >= count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::vector<pid_t> ClusterTest::WaitUntilNone(const std::function<bool(pid_t)>& counts,
                                              std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::vector<pid_t> left;
    for (pid_t pid : c().PidsInCluster()) {
      if (counts(pid)) left.push_back(pid);
    }
    if (left.empty() || std::chrono::steady_clock::now() >= deadline) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::vector<pid_t> ClusterTest::WaitUntilOnlySshds(std::chrono::milliseconds timeout) const {
  return WaitUntilNone(
      [&](pid_t pid) {
        return std::none_of(c().servers().begin(), c().servers().end(),
                            [&](const ClusterHost& host) { return host.sshd_pid == pid; });
      },
      timeout);
}

std::vector<pid_t> ClusterTest::WaitForNoLeftovers(const std::vector<std::string>& programs,
                                                   std::chrono::milliseconds timeout) const {
  return WaitUntilNone(
      [&](pid_t pid) {
        std::string name = ProgramName(pid);
        return name == "hvdrun-agent" || std::find(programs.begin(), programs.end(), name) != programs.end();
      },
      timeout);
}

std::vector<std::string> ClusterTest::SshFlags(const std::string& known_hosts) const {
  return {"--ssh-known-hosts",
          known_hosts.empty() ? c().known_hosts() : known_hosts,
          "-i",
          c().user_key(),
          "--agent-path",
          StagedProgram("hvdrun-agent")};
}

}  // namespace hvdrun::cluster
