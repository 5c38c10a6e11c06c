// SlurmCluster: a real Slurm cluster on a test cluster (test_cluster.h), for tests of hvdrun inside
// an allocation. Debian's munge, slurmctld and slurmd (22.05, built with --enable-multiple-slurmd):
//   - munged, with a key made for the run, its socket in a 0755 directory (munged refuses one that
//     others cannot enter), in the launcher's namespace;
//   - slurmctld in the launcher's namespace, as host `launcher`;
//   - one slurmd per server, `slurmd -N serverK`, in the server's namespace with the server's name
//     as hostname and the cluster's /etc/hosts. It is entered with `nsenter --net=` rather than
//     `ip netns exec`, which remounts /sys and so hides the cgroup filesystem that slurmd 22.05
//     needs even with proctrack/linuxproc; each node has its own spool and TmpFS directory.
// Each server's node is named as the server (server1..serverN) and has `cpus` CPUs; one partition
// `debug` holds them all. Everything lives in RunDir()/slurm; SLURM_CONF points clients to it.
//
// Cleanup: the daemons are this process's children, each in a process group of its own, and are
// SIGKILLed and reaped by ~SlurmCluster. What they started (slurmstepd, job steps) runs in the
// cluster's namespaces, which TestCluster::Destroy, or the run's reaper if this process dies,
// empties by pid.
//
// Not thread-safe. Needs root and the programs UnusableReason() names.
#ifndef HVDRUN_TESTS_CLUSTER_SLURM_CLUSTER_H_
#define HVDRUN_TESTS_CLUSTER_SLURM_CLUSTER_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "hvdrun/status.h"
#include "tests/cluster/test_cluster.h"
#include "tests/e2e/process_runner.h"

namespace hvdrun::cluster {

class SlurmCluster {
 public:
  // Empty when Debian's Slurm and munge are installed; otherwise what is missing, for a skip message
  // (scripts/install-deps.sh installs them).
  static std::string UnusableReason();

  // Starts the daemons on `cluster`'s hosts and waits until every node is idle (about 2 s). On
  // failure, stops what it started and returns one line naming the daemon, with its log's last line.
  static StatusOr<std::unique_ptr<SlurmCluster>> Start(const TestCluster& cluster, int cpus);

  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;
  // SIGKILL to every daemon still running, and reaps it.
  ~SlurmCluster();

  // slurm.conf, for SLURM_CONF.
  const std::string& conf() const { return conf_; }
  // "SLURM_CONF=<conf()>", for `env` before a Slurm client's argv.
  std::string ConfEnv() const { return "SLURM_CONF=" + conf_; }
  // The pids of munged, slurmctld and the slurmds (the programs themselves, not their wrappers).
  std::vector<pid_t> DaemonPids() const;

  // SIGKILL to server `number`'s slurmd (as a node that dies would lose it), which is then reaped.
  void KillSlurmd(int number);

 private:
  SlurmCluster() = default;
  Status BringUp(const TestCluster& cluster, int cpus);
  // Starts `argv` as a daemon: `command` (a shell line, $0 the hosts file, $1 the host name, then
  // argv) inside `netns` with its own UTS and mount namespaces. Output goes to `log`.
  StatusOr<e2e::RunningProcess> StartDaemon(const std::string& netns, const std::string& hosts_file,
                                            const std::string& host_name,
                                            const std::vector<std::string>& argv, const std::string& log);
  // Runs a Slurm client in the launcher's namespace; its stdout, or an error.
  StatusOr<std::string> Client(const std::vector<std::string>& argv) const;
  Status WaitUntil(const std::string& what, const std::vector<std::string>& argv, const std::string& expected,
                   std::chrono::milliseconds timeout) const;

  std::string dir_;
  std::string conf_;
  std::string launcher_netns_;
  std::string launcher_hosts_;
  std::vector<e2e::RunningProcess> daemons_;  // munged, slurmctld, slurmd of server1.. in order
  std::vector<std::string> daemon_names_;
  std::vector<std::string> daemon_logs_;
};

}  // namespace hvdrun::cluster

#endif  // HVDRUN_TESTS_CLUSTER_SLURM_CLUSTER_H_
