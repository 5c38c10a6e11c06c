// hvdrun-test-cluster: the multi-host test cluster (test_cluster.h) by hand, and its reaper.
//   hvdrun-test-cluster up [N] [--slurm] [--ready-file FILE]
//       builds a cluster of N servers (default 4), prints how to reach its hosts, keeps it until
//       SIGINT, SIGTERM or SIGHUP, then removes it. FILE, written once the cluster is up, lists
//       "run_id ID", "run_dir DIR", "netns NAME" and "sshd_pid PID" lines, for tests. With --slurm,
//       also runs Slurm on it (slurm_cluster.h: nodes server1..N, 2 CPUs each), and FILE gets a
//       "slurm_conf PATH" line.
//   hvdrun-test-cluster clean
//       removes the leftovers of runs whose owner is gone (Create does this too).
//   hvdrun-test-cluster reap RUN_ID
//       the reaper of RUN_ID (cluster_reaper.h), started by the harness with its pipe as stdin.
// Exit codes: 0 done, 1 failed, 2 usage.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/cluster/cluster_reaper.h"
#include "tests/cluster/cluster_run.h"
#include "tests/cluster/slurm_cluster.h"
#include "tests/cluster/test_cluster.h"

namespace hvdrun::cluster {
namespace {

constexpr int kUsageExit = 2;
constexpr int kDefaultServers = 4;

int Usage(const std::string& problem) {
  std::fprintf(stderr,
               "hvdrun-test-cluster: %s\n"
               "usage: hvdrun-test-cluster up [N] [--slurm] [--ready-file FILE] | clean | reap RUN_ID\n",
               problem.c_str());
  return kUsageExit;
}

int Fail(const Status& status) {
  std::fprintf(stderr, "hvdrun-test-cluster: %s\n", status.message().c_str());
  return 1;
}

void Describe(const TestCluster& cluster) {
  std::printf("hvdrun test cluster %s: %zu servers; files in %s\n", cluster.run_id().c_str(),
              cluster.servers().size(), cluster.run_dir().c_str());
  std::printf("  %-10s %-12s %-28s %s\n", "HOST", "ADDRESS", "NAMESPACE", "SSHD PID");
  std::vector<const ClusterHost*> hosts = {&cluster.launcher()};
  for (const ClusterHost& server : cluster.servers()) hosts.push_back(&server);
  for (const ClusterHost* host : hosts) {
    std::string sshd = host->sshd_pid > 0 ? std::to_string(host->sshd_pid) : "-";
    std::printf("  %-10s %-12s %-28s %s\n", host->name.c_str(), host->address.c_str(), host->netns.c_str(),
                sshd.c_str());
  }
  const std::string& launcher = cluster.launcher().netns;
  std::printf(
      "a shell in a host (its network and /etc/hosts):\n"
      "  ip netns exec %s bash\n"
      "ssh from the launcher to a server (also gives the server's hostname):\n"
      "  ip netns exec %s ssh -F %s server1\n"
      "Ctrl-C, SIGTERM or SIGHUP removes the cluster.\n",
      cluster.server(1).netns.c_str(), launcher.c_str(), cluster.ssh_config().c_str());
  std::fflush(stdout);
}

Status WriteReadyFile(const TestCluster& cluster, const SlurmCluster* slurm, const std::string& path) {
  std::string text = "run_id " + cluster.run_id() + "\nrun_dir " + cluster.run_dir() + "\n";
  if (slurm != nullptr) text += "slurm_conf " + slurm->conf() + "\n";
  for (const std::string& netns : cluster.Namespaces()) text += "netns " + netns + "\n";
  for (const ClusterHost& server : cluster.servers()) {
    text += "sshd_pid " + std::to_string(server.sshd_pid) + "\n";
  }
  // Written whole, then renamed: a reader never sees half of it.
  std::string partial = path + ".partial";
  std::ofstream(partial) << text;
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error) return Status::Error("--ready-file: cannot write " + path + ": " + error.message());
  return Status::Ok();
}

int Up(const std::vector<std::string>& args) {
  int servers = kDefaultServers;
  std::string ready_file;
  bool with_slurm = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--slurm") {
      with_slurm = true;
    } else if (args[i] == "--ready-file") {
      if (i + 1 == args.size()) return Usage("--ready-file: needs a value");
      ready_file = args[++i];
    } else if (!args[i].empty() && args[i].find_first_not_of("0123456789") == std::string::npos &&
               args[i].size() <= 4) {
      servers = std::stoi(args[i]);
    } else {
      return Usage("up: unexpected '" + args[i] + "'");
    }
  }
  // Blocked before anything starts, so that a signal while the cluster is built is taken by the
  // sigwait below; the harness starts every child with an empty mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop_signals, signal);
  sigprocmask(SIG_BLOCK, &stop_signals, nullptr);

  StatusOr<std::unique_ptr<TestCluster>> created = TestCluster::Create(servers);
  if (!created.ok()) return Fail(created.status());
  std::unique_ptr<TestCluster> cluster = std::move(created).value();
  std::unique_ptr<SlurmCluster> slurm;
  if (with_slurm) {
    if (std::string missing = SlurmCluster::UnusableReason(); !missing.empty()) {
      return Fail(Status::Error(missing));
    }
    StatusOr<std::unique_ptr<SlurmCluster>> started = SlurmCluster::Start(*cluster, 2);
    if (!started.ok()) return Fail(started.status());
    slurm = std::move(started).value();
  }
  Describe(*cluster);
  if (slurm != nullptr) {
    std::printf("Slurm: nodes server1..server%zu; clients in the launcher's namespace with SLURM_CONF=%s\n",
                cluster->servers().size(), slurm->conf().c_str());
    std::fflush(stdout);
  }
  if (!ready_file.empty()) {
    if (Status status = WriteReadyFile(*cluster, slurm.get(), ready_file); !status.ok()) return Fail(status);
  }
  int signal = 0;
  sigwait(&stop_signals, &signal);
  slurm.reset();
  Status status = cluster->Destroy();
  if (!status.ok()) return Fail(status);
  std::printf("hvdrun test cluster %s removed\n", cluster->run_id().c_str());
  return 0;
}

int Main(const std::vector<std::string>& args) {
  if (args.empty()) return Usage("give a command");
  const std::string& command = args[0];
  if (command == "up") return Up(std::vector<std::string>(args.begin() + 1, args.end()));
  if (command == "clean" && args.size() == 1) {
    std::vector<std::string> removed;
    Status status = RemoveStaleRuns(&removed);
    for (const std::string& run_id : removed) std::printf("removed %s\n", run_id.c_str());
    return status.ok() ? 0 : Fail(status);
  }
  if (command == "reap" && args.size() == 2) {
    if (RunOwner(args[1]) < 0) return Usage("reap: '" + args[1] + "' is not a run id");
    return RunReaper(args[1]);
  }
  return Usage("unknown command or arguments for '" + command + "'");
}

}  // namespace
}  // namespace hvdrun::cluster

int main(int argc, char** argv) {
  return hvdrun::cluster::Main(std::vector<std::string>(argv + 1, argv + argc));
}
