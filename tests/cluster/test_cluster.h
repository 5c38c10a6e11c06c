// A cluster of test hosts on this machine, for tests of multi-host launches over SSH.
//
// TestCluster::Create(n), as root, builds:
//   - a network namespace per host: `launcher` (where the program under test runs; no sshd) and
//     server1..serverN, each running its own OpenSSH sshd on port 22 of its address;
//   - a switch namespace holding a bridge, and per host a veth pair: `eth0` inside the host, the
//     bridge port `sw-<host>` in the switch. The machine's own namespace gets no new interface;
//   - addresses in 10.77.0.0/24: launcher 10.77.0.1, serverK 10.77.0.(10+K). No namespace has a
//     default route (Create checks), so no packet can leave the machine;
//   - a second network, as a lab's data network beside its management one: a second bridge and
//     per host a second veth pair, `data0` inside the host (bridge port `dsw-<host>`), with the same
//     host numbers in 10.78.0.0/24. Host names resolve to the first network's addresses only;
//   - /etc/netns/<netns>/hosts for every host, naming every host, which `ip netns exec` mounts on
//     /etc/hosts: the same names resolve in every host;
//   - per run, in RunDir(): a user key (ed25519) that every sshd accepts for root, a host key per
//     server, a known_hosts with every server under its name and address, and an ssh_config
//     holding all of that (SshArgv).
// A program started in a host (Exec, Start, or an ssh session there) sees the host's network, its
// /etc/hosts, and the host's name as its hostname.
//
// Cleanup: everything is named after the run id (cluster_run.h) and removed by Destroy(); if this
// process dies first, however it dies, by the run's reaper (cluster_reaper.h); should both be
// killed, by the next Create() on this machine, which removes runs whose owner is gone.
//
// Not thread-safe: one thread drives a cluster. Needs root (UnusableReason()).
#ifndef HVDRUN_TESTS_CLUSTER_TEST_CLUSTER_H_
#define HVDRUN_TESTS_CLUSTER_TEST_CLUSTER_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hvdrun/status.h"
#include "tests/cluster/cluster_reaper.h"
#include "tests/cluster/host_sshd.h"
#include "tests/e2e/process_runner.h"

namespace hvdrun::cluster {

struct ClusterHost {
  // "launcher" or "server1".."serverN": resolves to `address` in every host of the cluster.
  std::string name;
  // Its network namespace, for `ip netns exec` and `ip -n`: "<run id>-<name>".
  std::string netns;
  std::string address;
  // Its end of its veth pair, inside `netns`.
  std::string interface;
  // The other end: a port of the bridge, in the switch namespace; CutLink sets it down.
  std::string switch_port;
  // The same on the second network: "10.78.0.x", "data0", and its bridge port.
  std::string data_address;
  std::string data_interface;
  std::string data_switch_port;
  // A directory for the host's files: RunDir()/<name>.
  std::string dir;
  // A server's sshd files, in `dir`; empty for the launcher.
  SshdFiles sshd;
  // Its sshd, a child of this process; -1 for the launcher. Stays set after Destroy().
  pid_t sshd_pid = -1;
};

class TestCluster {
 public:
  // Servers take 10.77.0.11 to 10.77.0.210, below UnassignedAddress().
  static constexpr int kMaxServers = 200;
  // Every host's address is in it; each cluster has its own bridge, so concurrent clusters do not
  // share it.
  static constexpr char kSubnet[] = "10.77.0.0/24";

  // Empty when this process may build a cluster; otherwise why not, for a test's skip message:
  // not root, or root without the capabilities network namespaces need (a container). A missing
  // program or a failing command is not a reason to skip: Create() reports it.
  static std::string UnusableReason();

  // Builds a cluster of `servers` servers and the launcher (see above); on failure removes
  // whatever it built and returns one line naming the step, host and command that failed.
  // First removes the leftovers of runs whose owner is gone, with a warning on stderr when that
  // fails. Takes about 1 s for 4 servers on a busy 2-core machine.
  static StatusOr<std::unique_ptr<TestCluster>> Create(int servers);

  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;
  // Destroy(), printing its error, if any, on stderr.
  ~TestCluster();

  // Kills every process in the cluster's namespaces (sshd, sessions, whatever a test started),
  // deletes the namespaces and removes /etc/netns/<netns> and RunDir(). Returns the first error;
  // what could not be removed is retried by the reaper before this returns. Only the first call
  // does anything.
  Status Destroy();

  const std::string& run_id() const { return run_id_; }
  const ClusterHost& launcher() const { return launcher_; }
  const std::vector<ClusterHost>& servers() const { return servers_; }
  // Server `number` (server(1) is server1), 1 <= number <= servers().size().
  const ClusterHost& server(int number) const { return servers_.at(static_cast<size_t>(number - 1)); }
  // The namespace holding the bridge; no process runs there.
  const std::string& switch_netns() const { return switch_netns_; }
  // Every namespace of the cluster: the switch's, the launcher's and each server's.
  std::vector<std::string> Namespaces() const;

  // RunDir(run_id()): the run's files.
  const std::string& run_dir() const { return run_dir_; }
  // The user key that every server's authorized_keys holds (private; ".pub" beside it).
  std::string user_key() const { return run_dir_ + "/id_ed25519"; }
  // Every server's host key under "serverK,10.77.0.(10+K)".
  std::string known_hosts() const { return run_dir_ + "/known_hosts"; }
  // ssh client settings: user root, user_key(), known_hosts() with StrictHostKeyChecking yes,
  // BatchMode, no agent, no system-wide known hosts, ConnectTimeout 5.
  std::string ssh_config() const { return run_dir_ + "/ssh_config"; }
  // An address in the subnet that no host has: connecting to it fails with "No route to host"
  // after about 3 s of unanswered ARP.
  static std::string UnassignedAddress() { return "10.77.0.250"; }

  // The known_hosts line of `host`'s current host key: "server1,10.77.0.11 ssh-ed25519 AAAA...".
  std::string KnownHostsLine(const ClusterHost& host) const;

  // `argv` wrapped to run inside `host`: its namespace (ip netns exec) and its hostname.
  std::vector<std::string> InHost(const ClusterHost& host, const std::vector<std::string>& argv) const;
  // Runs `argv` inside `host` and waits for it (e2e::RunProcess); argv[0] is looked up in PATH.
  e2e::ProcessResult Exec(const ClusterHost& host, const std::vector<std::string>& argv,
                          std::chrono::milliseconds timeout, const e2e::ProcessOptions& options = {}) const;
  // Starts `argv` inside `host` in a process group of its own and leaves it running.
  e2e::RunningProcess Start(const ClusterHost& host, const std::vector<std::string>& argv,
                            const e2e::ProcessOptions& options = {}) const;
  // `ssh -F ssh_config() <target name> <remote_command>`: run it inside another host. The remote
  // command is one shell command line, as ssh always sends it; empty: a login shell.
  std::vector<std::string> SshArgv(const ClusterHost& target, const std::string& remote_command) const;

  // Sets `host`'s bridge port down, as pulling its cable would: nothing reaches it or leaves it,
  // while its processes keep running. RestoreLink sets the port up again.
  Status CutLink(const ClusterHost& host) const;
  Status RestoreLink(const ClusterHost& host) const;

  // Makes each server's /etc/hosts map the server's own name to 127.0.1.1, as Debian's installer
  // writes it (the other hosts' names keep their addresses): a program that binds to what its
  // host's name resolves to then listens on loopback only. The files are rewritten in place, so
  // that what already runs in the namespaces (sshd, and what it starts) sees the change.
  Status ResolveOwnNamesToLoopback() const;

  // The processes running inside `host`'s namespace (`ip netns pids`).
  std::vector<pid_t> PidsIn(const ClusterHost& host) const;
  // The processes running inside any namespace of the cluster.
  std::vector<pid_t> PidsInCluster() const;

 private:
  // Absolute paths of the programs the cluster runs.
  struct Programs {
    std::string ip;
    std::string sshd;
    std::string ssh;
    std::string ssh_keygen;
    std::string unshare;
    std::string hostname;
    std::string sh;
  };

  TestCluster() = default;

  Status BringUp(int servers);
  Status BuildNetwork();
  Status WriteFiles();
  Status StartServers();
  Status CheckNoDefaultRoute() const;
  // Runs `ip args...`; an error names the run.
  Status Ip(const std::vector<std::string>& args) const;
  // `host_byte`: the last byte of the host's address on both networks.
  ClusterHost MakeHost(const std::string& name, int host_byte) const;

  std::string run_id_;
  std::string run_dir_;
  std::string switch_netns_;
  Programs programs_;
  ClusterHost launcher_;
  std::vector<ClusterHost> servers_;
  // Declared before sshds_, so that it is destroyed after them: it outlives every process.
  std::optional<ClusterReaper> reaper_;
  std::vector<HostSshd> sshds_;
  bool destroyed_ = false;
};

}  // namespace hvdrun::cluster

#endif  // HVDRUN_TESTS_CLUSTER_TEST_CLUSTER_H_
