#include "launcher/mpirun/mpi_command.h"

#include <arpa/inet.h>
#include <algorithm>
#include <utility>

#include "common/env_names.h"
#include "common/host/network_interfaces.h"
#include "common/placement/host_spec.h"
#include "common/protocol/mpi_job_values.h"
#include "common/shell_words.h"
#include "launcher/ssh/remote_agent_command.h"

namespace hvdrun {
namespace {

bool IsIpv6Address(const std::string& host) {
  in6_addr address{};
  return ::inet_pton(AF_INET6, host.c_str(), &address) == 1;
}

// "localhost" or an address in 127.0.0.0/8: names of this machine that only it can use.
bool IsLoopbackName(const std::string& host) {
  in_addr address{};
  return host == "localhost" ||
         (::inet_pton(AF_INET, host.c_str(), &address) == 1 && (ntohl(address.s_addr) >> 24) == 127);
}

// The words that start the agent for each rank when mpirun runs them on hosts that are not this
// machine: the agent path, else the fallback (launcher/ssh/remote_agent_command.h); a host with neither
// prints the line hvdrun prints for it over SSH, naming the host by its own name. The agent's
// arguments follow these words, as "$@" of the shell ($0 is the agent path).
std::vector<std::string> RemoteAgentWords(const std::string& agent_path, const std::string& fallback_path) {
  std::string say_missing = "echo " + ShellQuote("hvdrun: host ") + "\"$(uname -n)\"" +
                            ShellQuote(": agent start: " + AgentNotFoundReason(agent_path, fallback_path)) +
                            " >&2";
  return {"/bin/sh", "-c", RemoteAgentCommand(agent_path, fallback_path, "\"$@\"", say_missing), agent_path};
}

// The words of Open MPI's plm_rsh_args: hvdrun's --ssh-* settings as ssh(1) options. BatchMode:
// ssh never prompts, as hvdrun's own SSH client never does.
std::string SshArgs(const SshOptions& ssh, int connect_timeout_s) {
  std::vector<std::string> words = {
      "-o", "BatchMode=yes", "-o",
      ssh.accept_new_host_keys ? "StrictHostKeyChecking=accept-new" : "StrictHostKeyChecking=yes"};
  if (!ssh.known_hosts.empty()) {
    words.emplace_back("-o");
    words.push_back("UserKnownHostsFile=" + ssh.known_hosts);
  }
  if (connect_timeout_s > 0) {
    words.emplace_back("-o");
    words.push_back("ConnectTimeout=" + std::to_string(connect_timeout_s));
  }
  if (!ssh.identity_file.empty()) {
    words.emplace_back("-i");
    words.push_back(ssh.identity_file);
  }
  if (ssh.port != 0) {
    words.emplace_back("-p");
    words.push_back(std::to_string(ssh.port));
  }
  if (!ssh.user.empty()) {
    words.emplace_back("-l");
    words.push_back(ssh.user);
  }
  std::string text;
  for (const std::string& word : words) {
    if (!text.empty()) text += " ";
    text += word;
  }
  return text;
}

}  // namespace

std::string MpiLayout(const RankAssignment& assignment) {
  std::string layout;
  for (const HostRanks& host : assignment.hosts()) {
    if (!layout.empty()) layout += ",";
    HostSlots entry;
    entry.host = host.host;
    entry.slots = static_cast<int>(host.ranks.size());
    layout += FormatHostSlots(entry);
  }
  return layout;
}

Status CheckMpiHosts(const RankAssignment& assignment,
                     const std::function<bool(const std::string&)>& is_this_machine) {
  const HostRanks* this_machine = nullptr;
  const HostRanks* remote = nullptr;
  for (const HostRanks& host : assignment.hosts()) {
    if (IsIpv6Address(host.host)) {
      return Status::Error("--mpi: host '" + host.host +
                           "' is an IPv6 address, which mpirun's -H cannot take; name the host by its name "
                           "or IPv4 address (this machine as localhost)");
    }
    if (!host.user.empty()) {
      return Status::Error("--mpi: host '" + host.user + "@" + host.host +
                           "': mpirun logs in to every host as one user; give it with --ssh-user");
    }
    if (!is_this_machine(host.host)) {
      if (remote == nullptr) remote = &host;
      continue;
    }
    if (this_machine != nullptr) {
      return Status::Error("--mpi: hosts '" + this_machine->host + "' and '" + host.host +
                           "' are both this machine, which mpirun runs as one node; name it once (-H " +
                           this_machine->host + ":" +
                           std::to_string(this_machine->ranks.size() + host.ranks.size()) + ")");
    }
    this_machine = &host;
  }
  if (this_machine != nullptr && remote != nullptr && IsLoopbackName(this_machine->host)) {
    return Status::Error("--mpi: host '" + this_machine->host + "' is this machine by a name that host '" +
                         remote->host +
                         "' cannot reach it by; name this machine by its host name or an address the "
                         "other hosts reach");
  }
  return Status::Ok();
}

Status CheckMpiSshOptions(const SshOptions& ssh) {
  for (const auto& [flag, value] : {std::pair<const char*, const std::string&>{"-i", ssh.identity_file},
                                    {"--ssh-known-hosts", ssh.known_hosts},
                                    {"--ssh-user", ssh.user}}) {
    if (value.find_first_of(" \t\n") != std::string::npos) {
      return Status::Error(std::string("--mpi: ") + flag + " '" + value +
                           "' has a space, which mpirun cannot pass on to ssh (Open MPI splits its ssh "
                           "arguments at spaces); use a value without one");
    }
  }
  return Status::Ok();
}

MpirunSettings MpirunSettingsOf(const LaunchOptions& options) {
  MpirunSettings settings;
  settings.ssh = options.ssh;
  settings.connect_timeout_s = options.start_timeout_s;
  settings.mpi_args = options.mpi_args;
  settings.binding_args = options.binding_args;
  settings.in_slurm_allocation = options.agent_start == AgentStart::kSlurm && options.slurm.has_value();
  settings.hosts_chosen_in_allocation = settings.in_slurm_allocation && options.hosts != options.slurm->nodes;
  return settings;
}

MpiCommand BuildMpiCommand(const RankAssignment& assignment, const JobLaunch& launch,
                           const MpirunSettings& settings, const std::string& agent_path,
                           const MpiLaunchHost& host) {
  MpiCommand command;
  std::vector<std::string>& argv = command.argv;
  argv.emplace_back("mpirun");
  if (host.as_root) argv.emplace_back("--allow-run-as-root");
  std::string layout = MpiLayout(assignment);
  for (const char* word : {"--tag-output", "-np"}) argv.emplace_back(word);
  argv.push_back(std::to_string(assignment.size()));
  // Inside a Slurm allocation (--launcher slurm), mpirun reads the nodes and slots from Slurm and
  // starts its daemons with srun, and ssh settings do not apply. An -H would only restate the
  // allocation's nodes; it is given when -H or --hostfile chose some of them.
  const bool slurm = settings.in_slurm_allocation;
  if (!slurm || settings.hosts_chosen_in_allocation) {
    argv.emplace_back("-H");
    argv.push_back(layout);
  }
  if (settings.binding_args) {
    argv.insert(argv.end(), settings.binding_args->begin(), settings.binding_args->end());
  } else {
    for (const char* word : {"-bind-to", "none", "-map-by", "slot"}) argv.emplace_back(word);
  }
  for (const char* word : {"-mca", "pml", "ob1", "-mca", "btl", "^openib"}) argv.emplace_back(word);
  if (host.remote_hosts && !slurm) {
    for (const char* word : {"-mca", "plm_rsh_no_tree_spawn", "1", "-mca", "plm_rsh_args"}) {
      argv.emplace_back(word);
    }
    argv.push_back(SshArgs(settings.ssh, settings.connect_timeout_s));
  }
  const std::vector<std::string>& interfaces = launch.environment.network_interfaces;
  if (!interfaces.empty()) {
    std::string names = JoinInterfaceNames(interfaces);
    for (const char* parameter : {"btl_tcp_if_include", "oob_tcp_if_include"}) {
      argv.emplace_back("-mca");
      argv.emplace_back(parameter);
      argv.push_back(names);
    }
  } else if (!host.remote_hosts) {
    for (const char* word : {"-mca", "btl_tcp_if_include", "lo"}) argv.emplace_back(word);
  }
  size_t most_ranks_on_a_host = 0;
  for (const HostRanks& ranks : assignment.hosts()) {
    most_ranks_on_a_host = std::max(most_ranks_on_a_host, ranks.ranks.size());
  }
  if (host.cpus > 0 && most_ranks_on_a_host >= static_cast<size_t>(host.cpus)) {
    for (const char* word : {"-mca", "mpi_yield_when_idle", "1"}) argv.emplace_back(word);
  }

  for (const auto& [name, value] : EncodeMpiJobValues(launch.environment, layout)) {
    argv.emplace_back("-x");
    argv.push_back(name);
    command.env.push_back(name + "=" + value);
  }

  argv.insert(argv.end(), settings.mpi_args.begin(), settings.mpi_args.end());
  if (host.remote_hosts && !settings.ssh.agent_fallback_path.empty()) {
    std::vector<std::string> words = RemoteAgentWords(agent_path, settings.ssh.agent_fallback_path);
    argv.insert(argv.end(), words.begin(), words.end());
  } else {
    argv.push_back(agent_path);
  }
  argv.emplace_back("--mpi-rank");
  argv.emplace_back("--");
  argv.insert(argv.end(), launch.command.begin(), launch.command.end());
  return command;
}

}  // namespace hvdrun
