// The test cluster itself: every host answers ssh inside its own namespace, names resolve, no
// packet can leave, a link can be cut, and nothing is left behind however the owner ends.
#include "tests/cluster/test_cluster.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "tests/cluster/checked_command.h"
#include "tests/cluster/cluster_run.h"
#include "tests/e2e/process_runner.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::cluster {
namespace {

namespace fs = std::filesystem;
using e2e::ProcessResult;
using std::chrono::milliseconds;

constexpr milliseconds kSshTimeout{15'000};
// How long a removal may take once the owner is gone: the reaper's, or Destroy's.
constexpr milliseconds kCleanupDeadline{5'000};

bool PathExists(const std::string& path) {
  std::error_code error;
  return fs::exists(fs::symlink_status(path, error));
}

// Interfaces of the namespace this test runs in (the machine's).
std::vector<std::string> OwnInterfaces() {
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator("/sys/class/net")) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// What of a run still exists: its namespaces, /etc/netns directories and files, one per line.
std::string Leftovers(const std::string& run_id) {
  std::string found;
  for (const std::string& netns : NamespacesOfRun(run_id)) found += "namespace " + netns + "\n";
  std::error_code error;
  for (fs::directory_iterator it(kNetnsEtcDir, error), end; !error && it != end; it.increment(error)) {
    if (RunIdOf(it->path().filename().string()) == run_id) found += it->path().string() + "\n";
  }
  if (PathExists(RunDir(run_id))) found += RunDir(run_id) + "\n";
  return found;
}

// Polls until nothing of the run exists and none of `pids` runs, for at most kCleanupDeadline;
// returns what is left, empty when all is gone.
std::string WaitUntilRemoved(const std::string& run_id, const std::vector<pid_t>& pids) {
  const auto deadline = std::chrono::steady_clock::now() + kCleanupDeadline;
  while (true) {
    std::string left = Leftovers(run_id);
    std::vector<pid_t> running = e2e::WaitUntilEnded(pids, milliseconds(0));
    if (!running.empty()) left += e2e::DescribeProcesses(running) + "\n";
    if (left.empty() || std::chrono::steady_clock::now() >= deadline) return left;
    std::this_thread::sleep_for(milliseconds(20));
  }
}

// /proc/<pid>/cmdline with spaces between the arguments.
std::string CommandLineOf(pid_t pid) {
  std::string text = e2e::ReadFileBytes("/proc/" + std::to_string(pid) + "/cmdline");
  if (!text.empty() && text.back() == '\0') text.pop_back();
  std::replace(text.begin(), text.end(), '\0', ' ');
  return text;
}

ino_t NetnsInode(const std::string& netns) {
  struct stat info {};
  if (::stat((std::string(kNetnsRunDir) + "/" + netns).c_str(), &info) != 0) return 0;
  return info.st_ino;
}

// Removes runs a test forged, however the test ends.
class RemoveRunsOnScopeExit {
 public:
  explicit RemoveRunsOnScopeExit(std::vector<std::string> run_ids) : run_ids_(std::move(run_ids)) {}
  RemoveRunsOnScopeExit(const RemoveRunsOnScopeExit&) = delete;
  RemoveRunsOnScopeExit& operator=(const RemoveRunsOnScopeExit&) = delete;
  ~RemoveRunsOnScopeExit() {
    for (const std::string& run_id : run_ids_) (void)TeardownRun(run_id);
  }

 private:
  std::vector<std::string> run_ids_;
};

class TestClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason = TestCluster::UnusableReason();
    if (!reason.empty()) GTEST_SKIP() << reason;
  }

  void CreateCluster(int servers) {
    StatusOr<std::unique_ptr<TestCluster>> created = TestCluster::Create(servers);
    ASSERT_TRUE(created.ok()) << created.status().message();
    cluster_ = std::move(created).value();
  }

  // Runs `remote_command` on `target` over ssh from `from`, with the cluster's ssh_config.
  ProcessResult Ssh(const ClusterHost& from, const ClusterHost& target, const std::string& remote_command) {
    return cluster_->Exec(from, cluster_->SshArgv(target, remote_command), kSshTimeout);
  }

  std::unique_ptr<TestCluster> cluster_;
};

TEST_F(TestClusterTest, EveryServerAnswersSshFromTheLauncherInsideItsOwnNamespace) {
  ASSERT_NO_FATAL_FAILURE(CreateCluster(4));
  ASSERT_EQ(cluster_->servers().size(), 4u);
  for (const ClusterHost& server : cluster_->servers()) {
    // The plain OpenSSH command line, without the harness's ssh_config.
    ProcessResult result = cluster_->Exec(
        cluster_->launcher(),
        {"ssh", "-F", "/dev/null", "-i", cluster_->user_key(), "-o",
         "UserKnownHostsFile=" + cluster_->known_hosts(), "-o", "GlobalKnownHostsFile=/dev/null", "-o",
         "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "root@" + server.name,
         "hostname; stat -L -c %i /proc/self/ns/net; ip -o -4 addr show dev eth0"},
        kSshTimeout);
    ASSERT_EQ(result.exit_code, 0) << server.name << result;
    std::istringstream lines(result.stdout_text);
    std::string hostname;
    std::string netns_inode;
    std::string address_line;
    std::getline(lines, hostname);
    std::getline(lines, netns_inode);
    std::getline(lines, address_line);
    EXPECT_EQ(hostname, server.name);
    EXPECT_EQ(netns_inode, std::to_string(NetnsInode(server.netns)))
        << "the session runs in " << server.netns;
    EXPECT_NE(address_line.find(" inet " + server.address + "/24 "), std::string::npos) << address_line;

    std::vector<pid_t> pids = cluster_->PidsIn(server);
    EXPECT_NE(std::find(pids.begin(), pids.end(), server.sshd_pid), pids.end())
        << server.name << "'s sshd " << server.sshd_pid << " runs in " << server.netns;
  }
  std::vector<pid_t> in_launcher = cluster_->PidsIn(cluster_->launcher());
  EXPECT_TRUE(in_launcher.empty()) << e2e::DescribeProcesses(in_launcher);
  EXPECT_TRUE(cluster_->Destroy().ok());
}

TEST_F(TestClusterTest, HostsResolveAndReachEachOtherByName) {
  ASSERT_NO_FATAL_FAILURE(CreateCluster(4));
  const std::vector<ClusterHost>& servers = cluster_->servers();
  for (size_t i = 0; i < servers.size(); ++i) {
    const ClusterHost& next = servers[(i + 1) % servers.size()];
    ProcessResult result = Ssh(servers[i], next, "hostname");
    EXPECT_EQ(result.exit_code, 0) << servers[i].name << " -> " << next.name << result;
    EXPECT_EQ(result.stdout_text, next.name + "\n");
  }
  for (const ClusterHost* host : {&cluster_->launcher(), &servers[2]}) {
    ProcessResult result = cluster_->Exec(*host, {"getent", "hosts", "server4", "launcher"}, kSshTimeout);
    EXPECT_EQ(result.exit_code, 0) << result;
    EXPECT_EQ(result.stdout_text, "10.77.0.14      server4\n10.77.0.1       launcher\n") << host->name;
  }
  ProcessResult hostname = cluster_->Exec(cluster_->launcher(), {"hostname"}, kSshTimeout);
  EXPECT_EQ(hostname.stdout_text, "launcher\n") << hostname;
}

TEST_F(TestClusterTest, NoNamespaceHasADefaultRouteSoNoPacketLeavesTheMachine) {
  std::vector<std::string> interfaces_before = OwnInterfaces();
  ASSERT_NO_FATAL_FAILURE(CreateCluster(2));
  EXPECT_EQ(OwnInterfaces(), interfaces_before) << "the machine's own namespace gets no interface";

  std::string ip = FindProgram("ip");
  std::vector<std::string> namespaces = cluster_->Namespaces();
  ASSERT_EQ(namespaces.size(), 4u) << "switch, launcher, server1, server2";
  for (const std::string& netns : namespaces) {
    for (const char* family : {"-4", "-6"}) {
      StatusOr<std::string> routes = RunChecked({ip, family, "-n", netns, "route", "show", "default"});
      ASSERT_TRUE(routes.ok()) << routes.status().message();
      EXPECT_EQ(routes.value(), "") << netns << " " << family;
    }
  }
  // 192.0.2.1 (TEST-NET-1) is outside the cluster's subnet: with no route, connect fails at once.
  ProcessResult result = cluster_->Exec(
      cluster_->launcher(), {"ssh", "-F", "/dev/null", "-o", "ConnectTimeout=5", "root@192.0.2.1", "true"},
      kSshTimeout);
  EXPECT_EQ(result.exit_code, 255) << result;
  EXPECT_NE(result.stderr_text.find("connect to host 192.0.2.1 port 22: Network is unreachable"),
            std::string::npos)
      << result;
  EXPECT_LT(result.elapsed, milliseconds(2000)) << result;
}

TEST_F(TestClusterTest, CutLinkMakesAHostUnreachableUntilRestoreLink) {
  ASSERT_NO_FATAL_FAILURE(CreateCluster(3));
  const ClusterHost& cut = cluster_->server(2);
  ProcessResult before = Ssh(cluster_->launcher(), cut, "hostname");
  ASSERT_EQ(before.exit_code, 0) << before;

  ASSERT_TRUE(cluster_->CutLink(cut).ok());
  // The launcher knows server2's MAC from the first session: the SYN goes out and nothing
  // answers (timed out); had it forgotten it, ARP would go unanswered (no route to host).
  ProcessResult after = cluster_->Exec(
      cluster_->launcher(), {"ssh", "-F", cluster_->ssh_config(), "-o", "ConnectTimeout=3", cut.name, "true"},
      kSshTimeout);
  EXPECT_EQ(after.exit_code, 255) << after;
  bool timed_out =
      after.stderr_text.find("connect to host server2 port 22: Connection timed out") != std::string::npos;
  bool no_route =
      after.stderr_text.find("connect to host server2 port 22: No route to host") != std::string::npos;
  EXPECT_TRUE(timed_out || no_route) << after;
  EXPECT_LT(after.elapsed, milliseconds(6000)) << after;
  EXPECT_TRUE(e2e::IsRunning(cut.sshd_pid)) << "a cut host keeps running";

  ProcessResult other = Ssh(cluster_->launcher(), cluster_->server(3), "hostname");
  EXPECT_EQ(other.exit_code, 0) << "the other hosts stay reachable" << other;

  ASSERT_TRUE(cluster_->RestoreLink(cut).ok());
  ProcessResult restored = Ssh(cluster_->launcher(), cut, "hostname");
  EXPECT_EQ(restored.exit_code, 0) << restored;
  EXPECT_EQ(restored.stdout_text, "server2\n");
}

TEST_F(TestClusterTest, ServersRefuseAnotherUserKeyAndTheClientAnUnknownHostKey) {
  ASSERT_NO_FATAL_FAILURE(CreateCluster(2));
  const std::string other_key = cluster_->launcher().dir + "/other_key";
  ASSERT_TRUE(RunChecked({FindProgram("ssh-keygen"), "-q", "-t", "ed25519", "-N", "", "-f", other_key}).ok());
  // Not through ssh_config(), whose IdentityFile ssh would try as well.
  ProcessResult wrong_key = cluster_->Exec(
      cluster_->launcher(),
      {"ssh", "-F", "/dev/null", "-i", other_key, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o",
       "UserKnownHostsFile=" + cluster_->known_hosts(), "root@server1", "true"},
      kSshTimeout);
  EXPECT_EQ(wrong_key.exit_code, 255) << wrong_key;
  EXPECT_NE(wrong_key.stderr_text.find("root@server1: Permission denied (publickey)."), std::string::npos)
      << wrong_key;

  // A known_hosts without server2, as a launcher on a machine that never met it would have.
  const std::string partial_known_hosts = cluster_->launcher().dir + "/known_hosts_without_server2";
  std::ofstream(partial_known_hosts) << cluster_->KnownHostsLine(cluster_->server(1)) << "\n";
  for (const ClusterHost& server : cluster_->servers()) {
    ProcessResult result =
        cluster_->Exec(cluster_->launcher(),
                       {"ssh", "-F", cluster_->ssh_config(), "-o",
                        "UserKnownHostsFile=" + partial_known_hosts, server.name, "hostname"},
                       kSshTimeout);
    if (server.name == "server1") {
      EXPECT_EQ(result.exit_code, 0) << result;
    } else {
      EXPECT_EQ(result.exit_code, 255) << result;
      EXPECT_NE(result.stderr_text.find("No ED25519 host key is known for server2"), std::string::npos)
          << result;
      EXPECT_NE(result.stderr_text.find("Host key verification failed."), std::string::npos) << result;
    }
  }
}

TEST_F(TestClusterTest, DestroyLeavesNoNamespaceHostsFileFileOrProcess) {
  ASSERT_NO_FATAL_FAILURE(CreateCluster(2));
  // Processes that outlive their ssh session and the test's own handle: only the harness can end them.
  ProcessResult escaped =
      Ssh(cluster_->launcher(), cluster_->server(1), "setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $!");
  ASSERT_EQ(escaped.exit_code, 0) << escaped;
  e2e::RunningProcess in_launcher = cluster_->Start(cluster_->launcher(), {"sleep", "600"});
  const pid_t escaped_pid = static_cast<pid_t>(std::stol(escaped.stdout_text));
  const ClusterHost& server1 = cluster_->server(1);
  const ClusterHost& server2 = cluster_->server(2);
  // Until the session's own processes have exited and the launcher's wrapper has become the sleep:
  // from then on nothing changes.
  auto sorted = [](std::vector<pid_t> pids) {
    std::sort(pids.begin(), pids.end());
    return pids;
  };
  auto settled = [&] {
    return cluster_->PidsIn(cluster_->launcher()) == std::vector<pid_t>{in_launcher.pid()} &&
           CommandLineOf(in_launcher.pid()) == "sleep 600" &&
           cluster_->PidsIn(server1) == sorted({server1.sshd_pid, escaped_pid}) &&
           cluster_->PidsIn(server2) == std::vector<pid_t>{server2.sshd_pid};
  };
  const auto deadline = std::chrono::steady_clock::now() + kCleanupDeadline;
  while (!settled() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  std::vector<pid_t> pids = cluster_->PidsInCluster();
  e2e::KillOnScopeExit strays;
  for (pid_t pid : pids) strays.Add(pid);
  ASSERT_TRUE(settled()) << "expected the two sshd, the escaped sleep " << escaped_pid
                         << " and the launcher's sleep " << in_launcher.pid() << "; "
                         << e2e::DescribeProcesses(pids);
  ASSERT_EQ(pids.size(), 4u);
  for (const std::string& netns : cluster_->Namespaces()) {
    ASSERT_TRUE(PathExists(std::string(kNetnsRunDir) + "/" + netns));
  }
  ASSERT_TRUE(PathExists(NetnsEtcDir(cluster_->server(2).netns) + "/hosts"));
  ASSERT_TRUE(PathExists(cluster_->run_dir()));

  Status destroyed = cluster_->Destroy();
  EXPECT_TRUE(destroyed.ok()) << destroyed.message();
  // Destroy returns once everything is gone: no polling.
  EXPECT_EQ(Leftovers(cluster_->run_id()), "");
  std::vector<pid_t> running = e2e::WaitUntilEnded(pids, milliseconds(0));
  EXPECT_TRUE(running.empty()) << e2e::DescribeProcesses(running);
  EXPECT_TRUE(cluster_->Destroy().ok()) << "a second Destroy does nothing";
}

// `hvdrun-test-cluster up 2` brings a cluster up and holds it; the test then ends it with `signal`.
class KilledOwnerTest : public TestClusterTest, public ::testing::WithParamInterface<int> {};

TEST_P(KilledOwnerTest, LeavesNothingBehindWithin5s) {
  e2e::ScratchDir scratch;
  ASSERT_FALSE(scratch.path().empty());
  const std::string ready_file = scratch.path() + "/ready";
  e2e::RunningProcess owner =
      e2e::RunningProcess::Start({HVDRUN_TEST_CLUSTER_TOOL, "up", "2", "--ready-file", ready_file});
  ASSERT_GT(owner.pid(), 0);
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(20'000);
  while (!PathExists(ready_file) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_TRUE(PathExists(ready_file)) << owner.Wait(milliseconds(0));

  std::map<std::string, std::vector<std::string>> ready;
  std::istringstream lines(e2e::ReadFileBytes(ready_file));
  for (std::string key, value; lines >> key >> value;) ready[key].push_back(value);
  ASSERT_EQ(ready["run_id"].size(), 1u);
  const std::string run_id = ready["run_id"][0];
  std::vector<pid_t> sshd_pids;
  for (const std::string& pid : ready["sshd_pid"]) sshd_pids.push_back(static_cast<pid_t>(std::stol(pid)));
  e2e::KillOnScopeExit strays;
  for (pid_t pid : sshd_pids) strays.Add(pid);
  ASSERT_EQ(sshd_pids.size(), 2u);
  ASSERT_EQ(ready["netns"].size(), 4u);
  EXPECT_EQ(NamespacesOfRun(run_id).size(), 4u);
  for (pid_t pid : sshd_pids) EXPECT_TRUE(e2e::IsRunning(pid));

  owner.Signal(GetParam());
  const auto signalled_at = std::chrono::steady_clock::now();
  ProcessResult result = owner.Wait(milliseconds(10'000));
  if (GetParam() == SIGKILL) {
    EXPECT_EQ(result.term_signal, SIGKILL) << result;
  } else {
    EXPECT_EQ(result.exit_code, 0) << result;
    EXPECT_NE(result.stdout_text.find("hvdrun test cluster " + run_id + " removed"), std::string::npos)
        << result;
  }
  std::string left = WaitUntilRemoved(run_id, sshd_pids);
  EXPECT_EQ(left, "") << "left behind " << kCleanupDeadline.count() << " ms after " << strsignal(GetParam());
  std::cout
      << "[          ] " << strsignal(GetParam()) << ": cluster removed "
      << std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - signalled_at).count()
      << " ms after the signal\n";
}

INSTANTIATE_TEST_SUITE_P(Signals, KilledOwnerTest, ::testing::Values(SIGKILL, SIGTERM, SIGINT),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return std::string(sigabbrev_np(param_info.param));
                         });

TEST_F(TestClusterTest, CreateRemovesLeftoversOfRunsWhoseOwnerIsGone) {
  // A pid that has just ended: its runs are stale (unless the pid is reused meanwhile).
  pid_t dead_owner = -1;
  {
    e2e::RunningProcess ended = e2e::RunningProcess::Start({FindProgram("true")});
    dead_owner = ended.pid();
    ASSERT_EQ(ended.Wait(milliseconds(5000)).exit_code, 0);
  }
  const std::string stale_run = "hvdt" + std::to_string(dead_owner) + "-1";
  const std::string live_run = "hvdt" + std::to_string(::getpid()) + "-999999";
  RemoveRunsOnScopeExit remove_forged({stale_run, live_run});

  // What a run killed together with its reaper leaves: a namespace with a process in it, its
  // /etc/netns directory, its files.
  const std::string ip = FindProgram("ip");
  for (const std::string& run_id : {stale_run, live_run}) {
    const std::string netns = NetnsName(run_id, "server1");
    StatusOr<std::string> added = RunChecked({ip, "netns", "add", netns});
    ASSERT_TRUE(added.ok()) << added.status().message();
    fs::create_directories(NetnsEtcDir(netns));
    std::ofstream(NetnsEtcDir(netns) + "/hosts") << "10.77.0.11 server1\n";
    fs::create_directories(RunDir(run_id));
  }
  const std::string stale_netns = NetnsName(stale_run, "server1");
  e2e::RunningProcess sleeper =
      e2e::RunningProcess::Start({ip, "netns", "exec", stale_netns, "sleep", "600"});
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(5000);
  while (PidsInNetns(stale_netns).empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_EQ(PidsInNetns(stale_netns), std::vector<pid_t>{sleeper.pid()});

  ASSERT_NO_FATAL_FAILURE(CreateCluster(1));
  EXPECT_EQ(Leftovers(stale_run), "");
  EXPECT_FALSE(e2e::IsRunning(sleeper.pid()));
  const std::string live_netns = NetnsName(live_run, "server1");
  EXPECT_EQ(Leftovers(live_run),
            "namespace " + live_netns + "\n" + NetnsEtcDir(live_netns) + "\n" + RunDir(live_run) + "\n")
      << "a run whose owner runs is left alone";
}

TEST(TestClusterCreateTest, RefusesAServerCountOutOfRange) {
  for (int servers : {0, -1, TestCluster::kMaxServers + 1}) {
    StatusOr<std::unique_ptr<TestCluster>> created = TestCluster::Create(servers);
    ASSERT_FALSE(created.ok());
    EXPECT_EQ(created.status().message(),
              "test cluster: " + std::to_string(servers) + " servers is out of range (1 to 200)");
  }
}

// Run as another user, the tests skip and say why; as root they would not.
TEST(TestClusterSkipTest, SkipsSayingWhyWhenNotRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "already not root: every other test here shows the skip";
  const std::string setpriv = FindProgram("setpriv");
  ASSERT_FALSE(setpriv.empty()) << "setpriv (Debian package util-linux) runs the test as another user";
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  ProcessResult result = e2e::RunProcess(
      {setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", self,
       "--gtest_filter=TestClusterTest.EveryServerAnswersSshFromTheLauncherInsideItsOwnNamespace"},
      milliseconds(30'000));
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.stdout_text.find(
                "[  SKIPPED ] TestClusterTest.EveryServerAnswersSshFromTheLauncherInsideItsOwnNamespace"),
            std::string::npos)
      << result;
  EXPECT_NE(result.stdout_text.find("the test cluster needs root"), std::string::npos) << result;
}

}  // namespace
}  // namespace hvdrun::cluster
