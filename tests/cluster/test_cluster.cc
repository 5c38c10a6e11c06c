#include "tests/cluster/test_cluster.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "tests/cluster/checked_command.h"
#include "tests/cluster/cluster_run.h"
#include "tests/e2e/scratch_dir.h"

#ifndef HVDRUN_TEST_CLUSTER_TOOL
#error "HVDRUN_TEST_CLUSTER_TOOL must name the hvdrun-test-cluster program (the reaper)"
#endif

namespace hvdrun::cluster {
namespace {

namespace fs = std::filesystem;

constexpr char kAddressPrefix[] = "10.77.0.";
constexpr char kPrefixLength[] = "/24";
constexpr int kLauncherHostByte = 1;
constexpr int kFirstServerHostByte = 11;
constexpr char kBridge[] = "br0";
constexpr char kHostInterface[] = "eth0";
// The second network: the same host numbers in 10.78.0.0/24, on interface data0 and bridge br1.
constexpr char kDataAddressPrefix[] = "10.78.0.";
constexpr char kDataBridge[] = "br1";
constexpr char kDataInterface[] = "data0";
// How long every sshd of a cluster has to listen, from the start of the first.
constexpr std::chrono::milliseconds kSshdStartTimeout{10'000};
// sshd's privilege separation directory (Debian's build); sshd refuses to start without it.
constexpr char kSshdPrivsepDir[] = "/run/sshd";
// Capability bits in /proc/self/status's CapEff (linux/capability.h).
constexpr int kCapNetAdmin = 12;
constexpr int kCapSysAdmin = 21;

Status WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status::Error("cannot write " + path);
  return Status::Ok();
}

Status MakeDirectory(const std::string& path) {
  std::error_code error;
  fs::create_directories(path, error);
  if (error) return Status::Error("cannot create directory " + path + ": " + error.message());
  return Status::Ok();
}

// CapEff of this process, 0 when unreadable.
uint64_t EffectiveCapabilities() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("CapEff:", 0) == 0) return static_cast<uint64_t>(std::stoull(line.substr(7), nullptr, 16));
  }
  return 0;
}

// sshd without PAM refuses every login to an account whose password field starts with '!', as
// `passwd -l` leaves it; some container images ship root that way.
Status CheckRootIsNotLocked() {
  std::ifstream shadow("/etc/shadow");
  std::string line;
  while (std::getline(shadow, line)) {
    if (line.rfind("root:", 0) != 0) continue;
    if (line.size() > 5 && line[5] == '!') {
      return Status::Error(
          "root's account is locked ('!' in /etc/shadow), so sshd refuses it any login; unlock it "
          "without a password: usermod -p '*' root");
    }
  }
  return Status::Ok();
}

// The first two fields of an OpenSSH public key line ("ssh-ed25519 AAAA..."), without the comment.
std::string KeyWithoutComment(const std::string& line) {
  std::istringstream in(line);
  std::string type;
  std::string key;
  in >> type >> key;
  return type + " " + key;
}

}  // namespace

std::string TestCluster::UnusableReason() {
  if (::geteuid() != 0) {
    return "the test cluster needs root: it creates network namespaces and runs sshd on port 22 "
           "(CI runs these tests as root)";
  }
  uint64_t capabilities = EffectiveCapabilities();
  for (int bit : {kCapNetAdmin, kCapSysAdmin}) {
    if ((capabilities & (uint64_t{1} << bit)) == 0) {
      return "the test cluster needs CAP_SYS_ADMIN and CAP_NET_ADMIN to create network namespaces, "
             "and this root lacks them (an unprivileged container?)";
    }
  }
  return "";
}

StatusOr<std::unique_ptr<TestCluster>> TestCluster::Create(int servers) {
  if (servers < 1 || servers > kMaxServers) {
    return Status::Error("test cluster: " + std::to_string(servers) + " servers is out of range (1 to " +
                         std::to_string(kMaxServers) + ")");
  }
  std::string unusable = UnusableReason();
  if (!unusable.empty()) return Status::Error(unusable);
  std::unique_ptr<TestCluster> cluster(new TestCluster());
  Status status = cluster->BringUp(servers);
  if (!status.ok()) {
    // The reaper (when it started) retries whatever this cannot remove.
    Status teardown = cluster->Destroy();
    if (!teardown.ok()) std::fprintf(stderr, "hvdrun test cluster: %s\n", teardown.message().c_str());
    return status;
  }
  return cluster;
}

TestCluster::~TestCluster() {
  Status status = Destroy();
  if (!status.ok()) std::fprintf(stderr, "hvdrun test cluster: %s\n", status.message().c_str());
}

Status TestCluster::BringUp(int servers) {
  struct Needed {
    std::string* path;
    const char* program;
    const char* package;
  };
  for (const Needed& needed :
       {Needed{&programs_.ip, "ip", "iproute2"}, Needed{&programs_.sshd, "sshd", "openssh-server"},
        Needed{&programs_.ssh, "ssh", "openssh-client"},
        Needed{&programs_.ssh_keygen, "ssh-keygen", "openssh-client"},
        Needed{&programs_.unshare, "unshare", "util-linux"},
        Needed{&programs_.hostname, "hostname", "hostname"}, Needed{&programs_.sh, "sh", "dash"}}) {
    *needed.path = FindProgram(needed.program);
    if (needed.path->empty()) {
      return Status::Error(std::string("test cluster: '") + needed.program +
                           "' not found in PATH or /usr/sbin, /sbin (Debian package " + needed.package + ")");
    }
  }
  if (Status status = CheckRootIsNotLocked(); !status.ok()) {
    return Status::Error("test cluster: " + status.message());
  }

  if (Status status = RemoveStaleRuns(nullptr); !status.ok()) {
    std::fprintf(stderr, "hvdrun test cluster: warning: leftovers of an earlier run remain: %s\n",
                 status.message().c_str());
  }

  run_id_ = NewRunId();
  run_dir_ = RunDir(run_id_);
  switch_netns_ = NetnsName(run_id_, "switch");
  StatusOr<ClusterReaper> reaper = ClusterReaper::Start(HVDRUN_TEST_CLUSTER_TOOL, run_id_);
  if (!reaper.ok()) return reaper.status();
  reaper_.emplace(std::move(reaper).value());

  launcher_ = MakeHost("launcher", kLauncherHostByte);
  for (int k = 0; k < servers; ++k) {
    ClusterHost server = MakeHost("server" + std::to_string(k + 1), kFirstServerHostByte + k);
    server.sshd = SshdFiles::In(server.dir);
    servers_.push_back(std::move(server));
  }
  if (Status status = BuildNetwork(); !status.ok()) return status;
  if (Status status = WriteFiles(); !status.ok()) return status;
  if (Status status = StartServers(); !status.ok()) return status;
  return CheckNoDefaultRoute();
}

ClusterHost TestCluster::MakeHost(const std::string& name, int host_byte) const {
  ClusterHost host;
  host.name = name;
  host.netns = NetnsName(run_id_, name);
  host.address = kAddressPrefix + std::to_string(host_byte);
  host.interface = kHostInterface;
  host.switch_port = "sw-" + name;
  host.data_address = kDataAddressPrefix + std::to_string(host_byte);
  host.data_interface = kDataInterface;
  host.data_switch_port = "dsw-" + name;
  host.dir = run_dir_ + "/" + name;
  return host;
}

Status TestCluster::Ip(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {programs_.ip};
  argv.insert(argv.end(), args.begin(), args.end());
  StatusOr<std::string> result = RunChecked(argv);
  if (!result.ok()) return Status::Error("test cluster " + run_id_ + ": " + result.status().message());
  return Status::Ok();
}

Status TestCluster::BuildNetwork() {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"netns", "add", switch_netns_},
           {"-n", switch_netns_, "link", "add", kBridge, "type", "bridge"},
           {"-n", switch_netns_, "link", "set", kBridge, "up"},
           {"-n", switch_netns_, "link", "add", kDataBridge, "type", "bridge"},
           {"-n", switch_netns_, "link", "set", kDataBridge, "up"}}) {
    if (Status status = Ip(args); !status.ok()) return status;
  }
  std::vector<const ClusterHost*> hosts = {&launcher_};
  for (const ClusterHost& server : servers_) hosts.push_back(&server);
  for (const ClusterHost* host : hosts) {
    // The host's end is created straight inside its namespace: none passes through the machine's.
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"netns", "add", host->netns},
             {"-n", switch_netns_, "link", "add", host->switch_port, "type", "veth", "peer", "name",
              host->interface, "netns", host->netns},
             {"-n", switch_netns_, "link", "set", host->switch_port, "master", kBridge, "up"},
             {"-n", host->netns, "addr", "add", host->address + kPrefixLength, "dev", host->interface},
             {"-n", host->netns, "link", "set", host->interface, "up"},
             {"-n", switch_netns_, "link", "add", host->data_switch_port, "type", "veth", "peer", "name",
              host->data_interface, "netns", host->netns},
             {"-n", switch_netns_, "link", "set", host->data_switch_port, "master", kDataBridge, "up"},
             {"-n", host->netns, "addr", "add", host->data_address + kPrefixLength, "dev",
              host->data_interface},
             {"-n", host->netns, "link", "set", host->data_interface, "up"},
             {"-n", host->netns, "link", "set", "lo", "up"}}) {
      if (Status status = Ip(args); !status.ok()) return status;
    }
  }
  return Status::Ok();
}

Status TestCluster::WriteFiles() {
  std::string failed = "test cluster " + run_id_ + ": ";
  for (const std::string& dir : {run_dir_, std::string(kSshdPrivsepDir)}) {
    if (Status status = MakeDirectory(dir); !status.ok()) return Status::Error(failed + status.message());
  }
  ::chmod(kSshdPrivsepDir, 0755);

  std::string hosts = "# hvdrun test cluster " + run_id_ +
                      " (tests/cluster/test_cluster.h)\n"
                      "127.0.0.1\tlocalhost\n"
                      "::1\tlocalhost ip6-localhost ip6-loopback\n" +
                      launcher_.address + "\t" + launcher_.name + "\n";
  for (const ClusterHost& server : servers_) hosts += server.address + "\t" + server.name + "\n";
  std::vector<const ClusterHost*> all = {&launcher_};
  for (const ClusterHost& server : servers_) all.push_back(&server);
  for (const ClusterHost* host : all) {
    std::string etc = NetnsEtcDir(host->netns);
    Status status = MakeDirectory(host->dir);
    if (status.ok()) status = MakeDirectory(etc);
    if (status.ok()) status = WriteTextFile(etc + "/hosts", hosts);
    if (!status.ok()) return Status::Error(failed + status.message());
  }

  auto generate_key = [&](const std::string& path, const std::string& comment) -> Status {
    StatusOr<std::string> made =
        RunChecked({programs_.ssh_keygen, "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path});
    return made.ok() ? Status::Ok() : Status::Error(failed + made.status().message());
  };
  if (Status status = generate_key(user_key(), "hvdrun test cluster " + run_id_ + " user"); !status.ok()) {
    return status;
  }
  std::string user_public_key = e2e::ReadFileBytes(user_key() + ".pub");
  std::string known_hosts;
  for (const ClusterHost& server : servers_) {
    if (Status status = generate_key(server.sshd.host_key, server.name); !status.ok()) return status;
    std::string config = SshdConfigText(
        server.sshd, server.address, "sshd of test host " + server.name + ", hvdrun test cluster " + run_id_);
    Status status = WriteTextFile(server.sshd.authorized_keys, user_public_key);
    if (status.ok()) status = WriteTextFile(server.sshd.config, config);
    if (!status.ok()) return Status::Error(failed + status.message());
    known_hosts += KnownHostsLine(server) + "\n";
  }
  std::string ssh_config = "# ssh client settings for hvdrun test cluster " + run_id_ + ": ssh -F " +
                           this->ssh_config() + " server1 [command]\nHost *\n  User root\n";
  ssh_config += "  IdentityFile " + user_key() + "\n";
  ssh_config += "  UserKnownHostsFile " + this->known_hosts() + "\n";
  ssh_config +=
      "  IdentitiesOnly yes\n"
      "  IdentityAgent none\n"
      "  GlobalKnownHostsFile /dev/null\n"
      "  StrictHostKeyChecking yes\n"
      "  UpdateHostKeys no\n"
      "  BatchMode yes\n"
      "  ConnectTimeout 5\n";
  Status status = WriteTextFile(this->known_hosts(), known_hosts);
  if (status.ok()) status = WriteTextFile(this->ssh_config(), ssh_config);
  if (!status.ok()) return Status::Error(failed + status.message());
  return Status::Ok();
}

Status TestCluster::StartServers() {
  for (ClusterHost& server : servers_) {
    StatusOr<HostSshd> sshd = HostSshd::Start(
        server.name, InHost(server, {programs_.sshd, "-D", "-f", server.sshd.config, "-E", server.sshd.log}),
        server.sshd);
    if (!sshd.ok()) return Status::Error("test cluster " + run_id_ + ": " + sshd.status().message());
    server.sshd_pid = sshd->pid();
    sshds_.push_back(std::move(sshd).value());
  }
  const auto deadline = std::chrono::steady_clock::now() + kSshdStartTimeout;
  for (const HostSshd& sshd : sshds_) {
    if (Status status = sshd.WaitUntilListening(deadline); !status.ok()) {
      return Status::Error("test cluster " + run_id_ + ": " + status.message());
    }
  }
  return Status::Ok();
}

Status TestCluster::CheckNoDefaultRoute() const {
  for (const std::string& netns : Namespaces()) {
    for (const char* family : {"-4", "-6"}) {
      StatusOr<std::string> routes =
          RunChecked({programs_.ip, family, "-n", netns, "route", "show", "default"});
      if (!routes.ok()) return Status::Error("test cluster " + run_id_ + ": " + routes.status().message());
      if (!routes->empty()) {
        std::string route = routes->substr(0, routes->find('\n'));
        return Status::Error("test cluster " + run_id_ + ": namespace " + netns + " has a default route ('" +
                             route + "'), so packets could leave the machine; refusing to run tests in it");
      }
    }
  }
  return Status::Ok();
}

Status TestCluster::Destroy() {
  if (destroyed_) return Status::Ok();
  destroyed_ = true;
  for (HostSshd& sshd : sshds_) sshd.Kill();
  sshds_.clear();
  if (run_id_.empty()) return Status::Ok();
  Status status = TeardownRun(run_id_);
  if (reaper_.has_value()) {
    // Not disarmed after a failure: the reaper tries again, and is waited for.
    if (status.ok()) reaper_->Disarm();
    reaper_.reset();
  }
  return status;
}

std::vector<std::string> TestCluster::Namespaces() const {
  std::vector<std::string> namespaces = {switch_netns_, launcher_.netns};
  for (const ClusterHost& server : servers_) namespaces.push_back(server.netns);
  return namespaces;
}

std::string TestCluster::KnownHostsLine(const ClusterHost& host) const {
  return host.name + "," + host.address + " " +
         KeyWithoutComment(e2e::ReadFileBytes(host.sshd.host_key + ".pub"));
}

std::vector<std::string> TestCluster::InHost(const ClusterHost& host,
                                             const std::vector<std::string>& argv) const {
  // A UTS namespace of its own gives the program the host's name; $0 is hostname(1), $1 the name.
  std::vector<std::string> wrapped = {programs_.ip,
                                      "netns",
                                      "exec",
                                      host.netns,
                                      programs_.unshare,
                                      "--uts",
                                      "--",
                                      programs_.sh,
                                      "-c",
                                      "\"$0\" \"$1\" && shift && exec \"$@\"",
                                      programs_.hostname,
                                      host.name};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

e2e::ProcessResult TestCluster::Exec(const ClusterHost& host, const std::vector<std::string>& argv,
                                     std::chrono::milliseconds timeout,
                                     const e2e::ProcessOptions& options) const {
  return e2e::RunProcess(InHost(host, argv), timeout, options);
}

e2e::RunningProcess TestCluster::Start(const ClusterHost& host, const std::vector<std::string>& argv,
                                       const e2e::ProcessOptions& options) const {
  return e2e::RunningProcess::Start(InHost(host, argv), options);
}

std::vector<std::string> TestCluster::SshArgv(const ClusterHost& target,
                                              const std::string& remote_command) const {
  std::vector<std::string> argv = {programs_.ssh, "-F", ssh_config(), target.name};
  if (!remote_command.empty()) argv.push_back(remote_command);
  return argv;
}

Status TestCluster::CutLink(const ClusterHost& host) const {
  return Ip({"-n", switch_netns_, "link", "set", host.switch_port, "down"});
}

Status TestCluster::RestoreLink(const ClusterHost& host) const {
  return Ip({"-n", switch_netns_, "link", "set", host.switch_port, "up"});
}

Status TestCluster::ResolveOwnNamesToLoopback() const {
  for (const ClusterHost& server : servers_) {
    const std::string path = NetnsEtcDir(server.netns) + "/hosts";
    std::string hosts = e2e::ReadFileBytes(path);
    const std::string entry = server.address + "\t" + server.name + "\n";
    size_t at = hosts.find(entry);
    if (at == std::string::npos) return Status::Error(path + " has no line for " + server.name);
    hosts.replace(at, entry.size(), "127.0.1.1\t" + server.name + "\n");
    // Truncated and written, not replaced: a bind mount of the file holds its inode.
    if (Status status = WriteTextFile(path, hosts); !status.ok()) return status;
  }
  return Status::Ok();
}

std::vector<pid_t> TestCluster::PidsIn(const ClusterHost& host) const { return PidsInNetns(host.netns); }

std::vector<pid_t> TestCluster::PidsInCluster() const {
  std::vector<pid_t> pids;
  for (const std::string& netns : Namespaces()) {
    std::vector<pid_t> in_netns = PidsInNetns(netns);
    pids.insert(pids.end(), in_netns.begin(), in_netns.end());
  }
  return pids;
}

}  // namespace hvdrun::cluster
