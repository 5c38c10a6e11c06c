#include "tests/cluster/slurm_cluster.h"

#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/cluster/checked_command.h"

namespace hvdrun::cluster {
namespace {

using std::chrono::milliseconds;

// Run by /bin/sh -c in the daemon's namespaces: binds the host's hosts file ($0) over /etc/hosts,
// takes the host's name ($1), and execs the daemon with its output appended to the log ($2).
constexpr char kDaemonScript[] =
    "mount --bind \"$0\" /etc/hosts && hostname \"$1\" && log=\"$2\" && shift 2 && exec \"$@\" >>\"$log\" "
    "2>&1";

// Far above the 1 to 2 s the daemons take on a busy 2-core machine.
constexpr milliseconds kStartTimeout{30'000};

// The last non-empty line of the file at `path`, for an error message.
std::string LastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::string last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last.empty() ? "(nothing in " + path + ")" : last;
}

std::string SlurmConf(const std::string& dir, const TestCluster& cluster, int cpus) {
  const int nodes = static_cast<int>(cluster.servers().size());
  std::string names = "server[1-" + std::to_string(nodes) + "]";
  std::string text =
      "# The test cluster's Slurm (tests/cluster/slurm_cluster.h).\n"
      "ClusterName=hvdtest\n"
      "SlurmctldHost=launcher(" +
      cluster.launcher().address +
      ")\n"
      "SlurmctldPort=6817\n"
      "SlurmdPort=6818\n"
      "SlurmUser=root\n"
      "SlurmdUser=root\n"
      "AuthType=auth/munge\n"
      "CredType=cred/munge\n"
      "AuthInfo=socket=" +
      dir + "/munge-run/munge.sock\n" + "StateSaveLocation=" + dir + "/state\n" + "SlurmdSpoolDir=" + dir +
      "/spool/%n\n" + "SlurmdPidFile=" + dir + "/run/slurmd-%n.pid\n" + "SlurmdLogFile=" + dir +
      "/log/slurmd-%n.log\n" + "SlurmctldPidFile=" + dir + "/run/slurmctld.pid\n" +
      "SlurmctldLogFile=" + dir + "/log/slurmctld.log\n" + "TmpFS=" + dir +
      "/tmp/%n\n"
      "ProctrackType=proctrack/linuxproc\n"
      "TaskPlugin=task/affinity\n"
      "SelectType=select/cons_tres\n"
      "SelectTypeParameters=CR_Core\n"
      "MpiDefault=none\n"
      "SwitchType=switch/none\n"
      "JobAcctGatherType=jobacct_gather/none\n"
      "AccountingStorageType=accounting_storage/none\n"
      "MailProg=/bin/true\n"
      "ReturnToService=2\n"
      // A cancelled job's processes get SIGTERM, then SIGKILL this many seconds later.
      "KillWait=5\n"
      "SlurmdTimeout=30\n";
  for (int k = 1; k <= nodes; ++k) {
    const ClusterHost& server = cluster.server(k);
    text += "NodeName=" + server.name + " NodeHostname=" + server.name + " NodeAddr=" + server.address +
            " CPUs=" + std::to_string(cpus) + " RealMemory=1000\n";
  }
  text += "PartitionName=debug Nodes=" + names + " Default=YES MaxTime=INFINITE State=UP\n";
  return text;
}

Status Chown(const std::string& path, const passwd& user) {
  if (::chown(path.c_str(), user.pw_uid, user.pw_gid) != 0) {
    return Status::Error("cannot give " + path + " to " + user.pw_name + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

std::string SlurmCluster::UnusableReason() {
  for (const char* program : {"munged", "mungekey", "slurmctld", "slurmd", "salloc", "sbatch", "srun",
                              "scontrol", "scancel", "sinfo", "squeue", "nsenter", "setpriv"}) {
    if (FindProgram(program).empty()) {
      return std::string("Slurm is not installed here (no ") + program +
             "; scripts/install-deps.sh installs slurmctld, slurmd, slurm-client and munge)";
    }
  }
  if (::getpwnam("munge") == nullptr) return "munge is not installed here (no user 'munge')";
  return "";
}

StatusOr<std::unique_ptr<SlurmCluster>> SlurmCluster::Start(const TestCluster& cluster, int cpus) {
  std::unique_ptr<SlurmCluster> slurm(new SlurmCluster());
  if (Status status = slurm->BringUp(cluster, cpus); !status.ok()) {
    return Status::Error("Slurm on test cluster " + cluster.run_id() + ": " + status.message());
  }
  return slurm;
}

SlurmCluster::~SlurmCluster() {
  // Destroying each RunningProcess SIGKILLs its process group and reaps it; the slurmds first, so
  // that none of them reports a lost controller.
  while (!daemons_.empty()) daemons_.pop_back();
}

std::vector<pid_t> SlurmCluster::DaemonPids() const {
  std::vector<pid_t> pids;
  for (const e2e::RunningProcess& daemon : daemons_) pids.push_back(daemon.pid());
  return pids;
}

void SlurmCluster::KillSlurmd(int number) {
  const size_t index = 1 + static_cast<size_t>(number);  // after munged and slurmctld
  daemons_.at(index).Signal(SIGKILL);
  daemons_.at(index).Wait(milliseconds(5'000));
}

Status SlurmCluster::BringUp(const TestCluster& cluster, int cpus) {
  namespace fs = std::filesystem;
  dir_ = cluster.run_dir() + "/slurm";
  conf_ = dir_ + "/slurm.conf";
  launcher_netns_ = cluster.launcher().netns;
  launcher_hosts_ = "/etc/netns/" + launcher_netns_ + "/hosts";
  std::error_code error;
  for (const char* sub : {"munge", "munge-run", "state", "log", "run", "spool", "tmp"}) {
    fs::create_directories(dir_ + "/" + sub, error);
    if (error) return Status::Error("cannot create " + dir_ + "/" + sub + ": " + error.message());
  }
  for (const ClusterHost& server : cluster.servers()) {
    for (const char* sub : {"spool", "tmp"}) {
      fs::create_directories(dir_ + "/" + sub + "/" + server.name, error);
      if (error) return Status::Error("cannot create " + dir_ + "/" + sub + ": " + error.message());
    }
  }
  const passwd* munge = ::getpwnam("munge");
  if (munge == nullptr) return Status::Error("no user 'munge'");
  const std::string key = dir_ + "/munge/munge.key";
  StatusOr<std::string> made = RunChecked({FindProgram("mungekey"), "--create", "--keyfile=" + key});
  if (!made.ok()) return made.status();
  for (const std::string& path : {dir_ + "/munge", dir_ + "/munge-run", key}) {
    if (Status status = Chown(path, *munge); !status.ok()) return status;
  }
  ::chmod((dir_ + "/munge").c_str(), 0700);
  ::chmod((dir_ + "/munge-run").c_str(), 0755);
  // The run directory is root's; munged, as munge, must reach its own directories through it.
  for (const std::string& path :
       {fs::path(cluster.run_dir()).parent_path().string(), cluster.run_dir(), dir_}) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0) {
      ::chmod(path.c_str(), st.st_mode | S_IXOTH);
    }
  }
  {
    std::ofstream out(conf_);
    out << SlurmConf(dir_, cluster, cpus);
    if (!out.good()) return Status::Error("cannot write " + conf_);
  }

  StatusOr<e2e::RunningProcess> munged = StartDaemon(
      launcher_netns_, launcher_hosts_, "launcher",
      {FindProgram("setpriv"), "--reuid=munge", "--regid=munge", "--init-groups", FindProgram("munged"), "-F",
       "--socket=" + dir_ + "/munge-run/munge.sock", "--key-file=" + key,
       "--log-file=" + dir_ + "/munge/munged.log", "--pid-file=" + dir_ + "/munge-run/munged.pid",
       "--seed-file=" + dir_ + "/munge/munged.seed"},
      dir_ + "/log/munged.out");
  if (!munged.ok()) return munged.status();
  daemons_.push_back(std::move(munged).value());
  daemon_names_.emplace_back("munged");
  daemon_logs_.push_back(dir_ + "/log/munged.out");
  // munged listens once its socket exists.
  const auto munge_deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (!fs::exists(dir_ + "/munge-run/munge.sock")) {
    if (!e2e::IsRunning(daemons_.back().pid()) || std::chrono::steady_clock::now() > munge_deadline) {
      return Status::Error("munged did not start: " + LastLine(dir_ + "/log/munged.out"));
    }
    std::this_thread::sleep_for(milliseconds(50));
  }

  StatusOr<e2e::RunningProcess> controller =
      StartDaemon(launcher_netns_, launcher_hosts_, "launcher", {FindProgram("slurmctld"), "-D", "-f", conf_},
                  dir_ + "/log/slurmctld.out");
  if (!controller.ok()) return controller.status();
  daemons_.push_back(std::move(controller).value());
  daemon_names_.emplace_back("slurmctld");
  daemon_logs_.push_back(dir_ + "/log/slurmctld.out");
  // slurmd registers with backoff (17 s, then more) when the controller is not up yet: wait for it.
  if (Status status = WaitUntil("slurmctld", {FindProgram("scontrol"), "ping"}, "is UP", kStartTimeout);
      !status.ok()) {
    return status;
  }
  for (const ClusterHost& server : cluster.servers()) {
    StatusOr<e2e::RunningProcess> node =
        StartDaemon(server.netns, "/etc/netns/" + server.netns + "/hosts", server.name,
                    {FindProgram("slurmd"), "-D", "-f", conf_, "-N", server.name},
                    dir_ + "/log/slurmd-" + server.name + ".out");
    if (!node.ok()) return node.status();
    daemons_.push_back(std::move(node).value());
    daemon_names_.push_back("slurmd " + server.name);
    daemon_logs_.push_back(dir_ + "/log/slurmd-" + server.name + ".out");
  }
  return WaitUntil("every slurmd", {FindProgram("sinfo"), "-h", "-o", "%T %D"},
                   "idle " + std::to_string(cluster.servers().size()) + "\n", kStartTimeout);
}

StatusOr<e2e::RunningProcess> SlurmCluster::StartDaemon(const std::string& netns,
                                                        const std::string& hosts_file,
                                                        const std::string& host_name,
                                                        const std::vector<std::string>& argv,
                                                        const std::string& log) {
  // $0 the hosts file, $1 the host's name, $2 the log, then the daemon's argv: the same /etc/hosts
  // and host name as the host's other programs, and the daemon as the process that was started
  // (nsenter, unshare and sh each exec the next).
  std::vector<std::string> wrapped = {FindProgram("nsenter"),
                                      "--net=/run/netns/" + netns,
                                      FindProgram("unshare"),
                                      "--uts",
                                      "--mount",
                                      "--",
                                      "/bin/sh",
                                      "-c",
                                      kDaemonScript,
                                      hosts_file,
                                      host_name,
                                      log};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  e2e::ProcessOptions options;
  options.extra_env = {ConfEnv()};
  e2e::RunningProcess daemon = e2e::RunningProcess::Start(wrapped, options);
  if (daemon.pid() < 0) return Status::Error("cannot start " + CommandLine(argv));
  return daemon;
}

StatusOr<std::string> SlurmCluster::Client(const std::vector<std::string>& argv) const {
  std::vector<std::string> wrapped = {FindProgram("nsenter"), "--net=/run/netns/" + launcher_netns_, "env",
                                      ConfEnv()};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return RunChecked(wrapped, milliseconds(5'000));
}

Status SlurmCluster::WaitUntil(const std::string& what, const std::vector<std::string>& argv,
                               const std::string& expected, milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last;
  while (true) {
    StatusOr<std::string> out = Client(argv);
    last = out.ok() ? out.value() : out.status().message();
    if (out.ok() && out->find(expected) != std::string::npos) return Status::Ok();
    for (size_t i = 0; i < daemons_.size(); ++i) {
      if (!e2e::IsRunning(daemons_[i].pid())) {
        return Status::Error(daemon_names_[i] + " exited: " + LastLine(daemon_logs_[i]));
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Status::Error(what + " not ready within " + std::to_string(timeout.count() / 1000) + " s ('" +
                           CommandLine(argv) + "' says '" + last +
                           "'); slurmctld's log: " + LastLine(dir_ + "/log/slurmctld.log"));
    }
    std::this_thread::sleep_for(milliseconds(200));
  }
}

}  // namespace hvdrun::cluster
