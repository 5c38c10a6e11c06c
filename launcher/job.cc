#include "launcher/job.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "common/env_names.h"
#include "common/exit_codes.h"
#include "common/job_secret.h"
#include "common/network_interfaces.h"
#include "common/rank_environment.h"
#include "common/version.h"
#include "launcher/host_facts_file.h"
#include "launcher/job_start.h"
#include "launcher/local_host.h"
#include "launcher/results_writer.h"

namespace hvdrun {
namespace {

// Agents report in at this interval; one silent for --heartbeat-timeout has failed.
constexpr std::chrono::milliseconds kHeartbeatInterval{1000};
// Between SIGTERM and SIGKILL when a job stops: long enough for a rank to flush its logs, short
// enough that a failed job is over in about a second.
constexpr std::chrono::milliseconds kKillGrace{1000};
// How long agents get to exit once their ranks have ended, beyond the kill grace.
constexpr std::chrono::milliseconds kAgentExitWait{3000};

std::string WorkingDirectory() {
  std::vector<char> buffer(4096);
  while (::getcwd(buffer.data(), buffer.size()) == nullptr && errno == ERANGE) {
    buffer.resize(buffer.size() * 2);
  }
  return buffer.data();
}

std::string RankList(const std::vector<int>& ranks) {
  if (ranks.empty()) return "none";
  if (ranks.size() == 1) return std::to_string(ranks.front());
  return std::to_string(ranks.front()) + "-" + std::to_string(ranks.back());
}

}  // namespace

Job::Job(LaunchOptions options, std::string agent_path)
    : options_(std::move(options)), agent_path_(std::move(agent_path)), output_(stdout, stderr) {}

int Job::Run() {
  // Hosts that are not this machine are reached over SSH (AgentConnection::StartRemote).
  StatusOr<RankAssignment> assignment = RankAssignment::Assign(options_.hosts, options_.num_proc);
  if (!assignment.ok()) {
    std::fprintf(stderr, "hvdrun: %s\n", assignment.status().message().c_str());
    return kExitUsage;
  }
  assignment_ = std::move(assignment).value();
  if (!options_.output_dir.empty()) {
    if (Status status = output_.OpenRankFiles(options_.output_dir, assignment_.size()); !status.ok()) {
      std::fprintf(stderr, "hvdrun: %s\n", status.message().c_str());
      return kExitUsage;
    }
  }
  outcomes_ = InitialOutcomes(assignment_);
  job_id_ = NewJobId();
  // Before the rendezvous service's thread starts, which inherits the blocked signals: a signal
  // that thread could take would bypass the signalfd (and SIGINT would end hvdrun on the spot).
  if (!SetUpSignals()) return kExitLaunchFailure;
  for (const HostRanks& host : assignment_.hosts()) {
    any_remote_ = any_remote_ || !RunsHere(host.host, host.user);
  }
  if (options_.backend) secret_ = NewJobSecret();
  if (options_.backend && !options_.network_interfaces.empty()) {
    StatusOr<std::string> address = ThisMachineInterfaceAddress(options_.network_interfaces);
    if (!address.ok()) {
      std::fprintf(stderr, "hvdrun: %s\n", address.status().message().c_str());
      return kExitUsage;
    }
    job_address_ = std::move(address).value();
    Verbose("job network: the rendezvous service listens on " + job_address_ + " (--network-interface)");
  }
  // With remote hosts the service must listen on the address they reach this machine by, known
  // once their SSH connections are up (unless --network-interface chose it): SendLaunch starts it
  // then.
  if (options_.backend && !any_remote_) {
    if (job_address_.empty()) job_address_ = kRendezvousAddress;
    StatusOr<std::unique_ptr<RendezvousServer>> server = StartJobRendezvous(secret_, job_address_);
    if (!server.ok()) {
      std::fprintf(stderr, "hvdrun: %s\n", server.status().message().c_str());
      return kExitLaunchFailure;
    }
    rendezvous_ = std::move(server).value();
    Verbose("rendezvous service on " + job_address_ + ":" + std::to_string(rendezvous_->port()));
  }
  if (!StartAgents()) {
    ShutDownAgents();
    return kExitLaunchFailure;
  }

  start_deadline_ = Clock::now() + std::chrono::seconds(options_.start_timeout_s);
  last_heartbeat_sent_ = Clock::now();
  // A failed start still waits for every other host's outcome (bounded by --start-timeout), so
  // that each failing host gets its line.
  while (!(start_failed_ && StartSettled()) && !(launched_ && AllRanksEnded())) {
    if (!launched_ && !stopping_ && !start_failed_ &&
        std::all_of(agents_.begin(), agents_.end(), [](const HostAgent& a) { return a.hello_received; })) {
      SendLaunch();
      continue;
    }
    if (!launched_ && stopping_) break;  // interrupted while starting
    PollOnce(static_cast<int>(kHeartbeatInterval.count()));
    CheckTimers();
    output_.Flush();
  }
  ShutDownAgents();
  output_.Flush();
  int exit_code = Report();
  if (Status status = CollectResults(); !status.ok()) {
    std::fprintf(stderr, "hvdrun: %s\n", status.message().c_str());
    if (exit_code == 0) exit_code = kExitResults;
  }
  return exit_code;
}

Status Job::CollectResults() {
  Status status = PublishResults(rendezvous_ ? rendezvous_->Reports() : std::map<int, std::string>{},
                                 assignment_, options_, job_id_);
  if (!status.ok() || options_.results_dir.empty()) return status;
  for (const HostAgent& agent : agents_) {
    if (!agent.hello_received || agent.hello.facts.empty()) continue;
    status = WriteHostFactsFile(options_.results_dir, agent.connection->host(), agent.hello.facts);
    if (!status.ok()) return status;
  }
  return Status::Ok();
}

bool Job::SetUpSignals() {
  StatusOr<UniqueFd> signals = WatchJobSignals();
  if (!signals.ok()) {
    std::fprintf(stderr, "hvdrun: %s\n", signals.status().message().c_str());
    return false;
  }
  signals_ = std::move(signals).value();
  return true;
}

bool Job::StartAgents() {
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(options_.start_timeout_s);
  for (const HostRanks& host : assignment_.hosts()) {
    bool local = RunsHere(host.host, host.user);
    SshOptions ssh = options_.ssh;
    if (!host.user.empty()) ssh.user = host.user;  // user@host overrides --ssh-user
    StatusOr<std::unique_ptr<AgentConnection>> connection =
        local ? AgentConnection::StartLocal(host.host, agent_path_)
              : AgentConnection::StartRemote(host.host, ssh, options_.remote_agent_path, deadline);
    if (!connection.ok()) {
      std::fprintf(stderr, "hvdrun: %s\n", connection.status().message().c_str());
      return false;
    }
    HostAgent agent;
    agent.connection = std::move(connection).value();
    agent.ranks = host.ranks;
    agent.local = local;
    agent.last_heard = Clock::now();
    Verbose("host " + host.host + ": agent " +
            (local ? "started (pid " + std::to_string(agent.connection->pid()) + ")" : "starting over SSH") +
            ", ranks " + RankList(host.ranks));
    protocol::Hello hello;
    hello.hvdrun_version = kVersion;
    hello.heartbeat_interval_ms = static_cast<uint32_t>(kHeartbeatInterval.count());
    hello.heartbeat_timeout_ms = static_cast<uint32_t>(options_.heartbeat_timeout_s * 1000);
    hello.want_facts = !options_.results_dir.empty();  // for DIR/hosts/<host>.json
    agent.connection->Send(hello);
    agents_.push_back(std::move(agent));
  }
  return true;
}

void Job::SendLaunch() {
  for (HostAgent& agent : agents_) {
    const protocol::AgentHello& hello = agent.hello;
    if (hello.protocol_version != protocol::kProtocolVersion || hello.hvdrun_version != kVersion) {
      std::fprintf(
          stderr,
          "hvdrun: host %s: version mismatch: its hvdrun-agent is %s (protocol %u), this hvdrun is %s "
          "(protocol %u); install the same hvdrun on every host\n",
          agent.connection->host().c_str(), hello.hvdrun_version.c_str(), hello.protocol_version, kVersion,
          protocol::kProtocolVersion);
      agent.start_failed = true;
      start_failed_ = true;
    }
  }
  if (start_failed_) return;
  if (!options_.network_interfaces.empty() && !ChooseHostAddresses()) {
    start_failed_ = true;
    start_failure_code_ = kExitUsage;
    return;
  }
  if (any_remote_ && !StartRemoteJobRendezvous()) {
    start_failed_ = true;
    return;
  }
  const HostAgent& rank0_agent = agents_.front();
  JobEnvironment job;
  job.job_id = job_id_;
  job.master_addr = JobAddressOf(rank0_agent);
  job.master_port = rank0_agent.hello.free_port;
  job.exports = options_.exports;
  job.network_interfaces = options_.network_interfaces;
  if (rendezvous_) {
    job.backend = std::string(BackendName(*options_.backend));
    job.rendezvous_addr = job_address_;
    job.rendezvous_port = rendezvous_->port();
    job.secret = secret_;
  }
  Verbose("job " + job.job_id + ": " + std::to_string(assignment_.size()) + " ranks on " +
          std::to_string(agents_.size()) + " hosts; MASTER_ADDR=" + job.master_addr +
          " MASTER_PORT=" + std::to_string(job.master_port));
  std::string working_dir = options_.working_dir.empty() ? WorkingDirectory() : options_.working_dir;
  for (HostAgent& agent : agents_) {
    protocol::Launch launch;
    launch.kill_grace_ms = static_cast<uint32_t>(kKillGrace.count());
    for (int rank : agent.ranks) {
      std::vector<std::string> env = BuildRankEnvironment(assignment_, rank, job);
      if (any_remote_ || !options_.network_interfaces.empty()) {
        SetEnvironmentValue(env, env::kHostAddr, JobAddressOf(agent));
      }
      launch.ranks.push_back(protocol::RankLaunch{rank, options_.command, std::move(env), working_dir});
    }
    agent.connection->Send(launch);
  }
  launched_ = true;
}

void Job::PollOnce(int timeout_ms) {
  std::vector<pollfd> fds;
  fds.push_back({signals_.get(), POLLIN, 0});
  std::vector<HostAgent*> owners;
  for (HostAgent& agent : agents_) {
    if (agent.connection->stream_closed()) continue;
    fds.push_back({agent.connection->read_fd(), POLLIN, 0});
    owners.push_back(&agent);
  }
  int ready = ::poll(fds.data(), fds.size(), timeout_ms);
  if (ready <= 0) return;
  if (fds[0].revents != 0) HandleSignals();
  for (size_t i = 1; i < fds.size(); ++i) {
    if (fds[i].revents != 0) HandleAgentInput(*owners[i - 1]);
  }
}

void Job::HandleSignals() {
  signalfd_siginfo info;
  while (::read(signals_.get(), &info, sizeof(info)) == sizeof(info)) {
    int sig = static_cast<int>(info.ssi_signo);
    if (sig == SIGCHLD) continue;  // agents are reaped in ShutDownAgents; their streams tell us first
    if (interrupt_signal_ != 0 && sig == SIGINT) {
      std::fprintf(stderr, "hvdrun: second interrupt: killing every rank now\n");
      for (HostAgent& agent : agents_) agent.connection->Send(protocol::Terminate{.immediate = true});
      continue;
    }
    if (interrupt_signal_ == 0) {
      interrupt_signal_ = sig;
      std::fprintf(stderr, "hvdrun: %s received: stopping every rank\n", SignalName(sig).c_str());
    }
    BeginStop();
  }
}

void Job::HandleAgentInput(HostAgent& agent) {
  std::vector<protocol::Message> messages;
  Status status = agent.connection->ReadMessages(&messages);
  if (!messages.empty()) agent.last_heard = Clock::now();
  for (protocol::Message& message : messages) HandleMessage(agent, std::move(message));
  if (!status.ok()) {
    AgentFailed(agent, "protocol error: " + status.message());
  } else if (agent.connection->stream_closed()) {
    bool ranks_left = std::any_of(agent.ranks.begin(), agent.ranks.end(),
                                  [&](int rank) { return !outcomes_[rank].exited; });
    if (!launched_ || ranks_left) AgentFailed(agent, agent.connection->EndReason());
  }
}

void Job::HandleMessage(HostAgent& agent, protocol::Message message) {
  // Every rank message must be about one of this agent's ranks.
  std::optional<int32_t> rank;
  if (auto* output = std::get_if<protocol::RankOutput>(&message)) rank = output->rank;
  if (auto* started = std::get_if<protocol::RankStarted>(&message)) rank = started->rank;
  if (auto* exited = std::get_if<protocol::RankExited>(&message)) rank = exited->rank;
  if (rank && std::find(agent.ranks.begin(), agent.ranks.end(), *rank) == agent.ranks.end()) {
    AgentFailed(
        agent, "protocol error: the agent reported rank " + std::to_string(*rank) + ", not one of its ranks");
    return;
  }
  if (auto* output = std::get_if<protocol::RankOutput>(&message)) {
    output_.Write(*output);
  } else if (auto* started = std::get_if<protocol::RankStarted>(&message)) {
    outcomes_[started->rank].pid = started->pid;
    Verbose("rank " + std::to_string(started->rank) + " started on " + agent.connection->host() + ", pid " +
            std::to_string(started->pid));
  } else if (auto* exited = std::get_if<protocol::RankExited>(&message)) {
    HandleRankExited(*exited);
  } else if (auto* hello = std::get_if<protocol::AgentHello>(&message)) {
    agent.hello = *hello;
    agent.hello_received = true;
    Verbose("host " + agent.connection->host() + ": agent ready (" + hello->hostname + ", hvdrun-agent " +
            hello->hvdrun_version + ")");
  } else if (auto* error = std::get_if<protocol::AgentError>(&message)) {
    AgentFailed(agent, error->message);
  } else if (!std::holds_alternative<protocol::Heartbeat>(message)) {
    AgentFailed(agent, "protocol error: the agent sent a launcher's message (" +
                           std::string(protocol::MessageName(message)) + ")");
  }
}

void Job::HandleRankExited(const protocol::RankExited& exited) {
  RankOutcome& outcome = outcomes_[exited.rank];
  if (outcome.exited) return;
  outcome.exited = true;
  outcome.exit = exited;
  // A rank that ends by hvdrun's own signals after the stop began was stopped; one that exits
  // with an error of its own then still failed, though not first.
  outcome.stopped_by_hvdrun = stopping_ && (exited.signal == SIGTERM || exited.signal == SIGKILL);
  Verbose("rank " + std::to_string(exited.rank) + " ended: " +
          (exited.signal != 0 ? SignalName(exited.signal) : "exit " + std::to_string(exited.exit_code)));
  if (outcome.Failed() && !stopping_) {
    first_failure_ = exited.rank;
    BeginStop();
  }
}

void Job::AgentFailed(HostAgent& agent, const std::string& reason) {
  if (!launched_) {
    // Once the start has failed and every host has answered or failed, agents that end are
    // being shut down: not failures of their own.
    if (!agent.start_failed && !(start_failed_ && StartSettled())) {
      std::fprintf(stderr, "hvdrun: host %s: %s: %s\n", agent.connection->host().c_str(),
                   agent.connection->Stage().c_str(), reason.c_str());
    }
    agent.start_failed = true;
    start_failed_ = true;
    if (agent.remote()) agent.connection->Kill();
    return;
  }
  for (int rank : agent.ranks) {
    RankOutcome& outcome = outcomes_[rank];
    if (outcome.exited || !outcome.lost_reason.empty()) continue;
    outcome.lost_reason = "agent failed: " + reason;
    outcome.stopped_by_hvdrun = stopping_;
    if (!stopping_ && first_failure_ < 0) first_failure_ = rank;
  }
  agent.connection->CloseInput();
  // A remote agent that failed is not waited for: dropping its connection closes its stdin, or,
  // when the host is cut off, the agent's own heartbeat timeout stops its ranks.
  if (agent.remote()) agent.connection->Kill();
  KillRankGroups(agent);
  BeginStop();
}

void Job::KillRankGroups(const HostAgent& agent) {
  if (!agent.local) return;
  for (int rank : agent.ranks) {
    const RankOutcome& outcome = outcomes_[rank];
    // Each rank leads its own process group, whose id is the rank's pid. The agent reaps its
    // ranks, so a pid that has not been reported as exited still names the rank's group.
    if (outcome.pid > 0 && !outcome.exited) ::killpg(outcome.pid, SIGKILL);
  }
}

void Job::CheckTimers() {
  Clock::time_point now = Clock::now();
  if (!launched_ && now >= start_deadline_) {
    for (HostAgent& agent : agents_) {
      if (!agent.hello_received) {
        AgentFailed(agent,
                    "no answer within " + std::to_string(options_.start_timeout_s) + " s (--start-timeout)");
      }
    }
  }
  // Until an agent has answered, --start-timeout alone judges it; after that, heartbeats do.
  for (HostAgent& agent : agents_) {
    if (agent.hello_received && !agent.connection->stream_closed() &&
        now - agent.last_heard > std::chrono::seconds(options_.heartbeat_timeout_s)) {
      AgentFailed(agent, "no heartbeat for " + std::to_string(options_.heartbeat_timeout_s) +
                             " s (--heartbeat-timeout)");
    }
  }
  if (now - last_heartbeat_sent_ >= kHeartbeatInterval) {
    for (HostAgent& agent : agents_) {
      if (agent.hello_received) agent.connection->Send(protocol::Heartbeat{});
    }
    last_heartbeat_sent_ = now;
  }
}

void Job::BeginStop() {
  if (stopping_) return;
  stopping_ = true;
  for (HostAgent& agent : agents_) agent.connection->Send(protocol::Terminate{});
}

void Job::ShutDownAgents() {
  for (HostAgent& agent : agents_) agent.connection->CloseInput();
  Clock::time_point deadline = Clock::now() + kKillGrace + kAgentExitWait;
  bool killed = false;
  while (true) {
    bool all_reaped = true;
    for (HostAgent& agent : agents_) {
      int status = 0;
      if (!agent.connection->Reap(&status)) all_reaped = false;
    }
    if (all_reaped) return;
    if (!killed && Clock::now() >= deadline) {
      for (HostAgent& agent : agents_) {
        std::fprintf(stderr, "hvdrun: host %s: the agent did not exit; killing it\n",
                     agent.connection->host().c_str());
        agent.connection->Kill();
        KillRankGroups(agent);
      }
      killed = true;
    }
    // Keep reading: an agent blocked on a full pipe could not exit.
    PollOnce(50);
  }
}

bool Job::StartSettled() const {
  return std::all_of(agents_.begin(), agents_.end(),
                     [](const HostAgent& a) { return a.hello_received || a.start_failed; });
}

bool Job::AllRanksEnded() const {
  return std::all_of(outcomes_.begin(), outcomes_.end(),
                     [](const RankOutcome& o) { return o.exited || !o.lost_reason.empty(); });
}

int Job::Report() {
  if (start_failed_) return start_failure_code_ != 0 ? start_failure_code_ : kExitLaunchFailure;
  return ReportJobEnd(outcomes_, first_failure_, interrupt_signal_, output_);
}

bool Job::ChooseHostAddresses() {
  bool chosen = true;
  for (HostAgent& agent : agents_) {
    StatusOr<std::string> address =
        ChooseInterfaceAddress(agent.hello.interfaces, options_.network_interfaces, agent.connection->host());
    if (!address.ok()) {
      std::fprintf(stderr, "hvdrun: --network-interface: %s\n", address.status().message().c_str());
      agent.start_failed = true;
      chosen = false;
      continue;
    }
    agent.interface_address = std::move(address).value();
    Verbose("host " + agent.connection->host() + ": job traffic on " + agent.interface_address +
            " (--network-interface)");
  }
  return chosen;
}

bool Job::StartRemoteJobRendezvous() {
  for (const HostAgent& agent : agents_) {
    if (!job_address_.empty()) break;  // chosen by --network-interface
    if (!agent.remote()) continue;
    job_address_ = agent.connection->transport()->local_address();
    Verbose("job network: the hosts reach this machine at " + job_address_ + " (the local end of the SSH " +
            "connection to " + agent.connection->host() + ")");
    break;
  }
  if (!options_.backend) return true;
  StatusOr<std::unique_ptr<RendezvousServer>> server = StartJobRendezvous(secret_, job_address_);
  if (!server.ok()) {
    std::fprintf(stderr, "hvdrun: %s\n", server.status().message().c_str());
    return false;
  }
  rendezvous_ = std::move(server).value();
  Verbose("rendezvous service on " + job_address_ + ":" + std::to_string(rendezvous_->port()));
  return true;
}

std::string Job::JobAddressOf(const HostAgent& agent) const {
  if (!agent.interface_address.empty()) return agent.interface_address;
  if (agent.remote()) return agent.connection->transport()->remote_address();
  return any_remote_ ? job_address_ : HostAddress(agent.connection->host());
}

void Job::Verbose(const std::string& line) const {
  if (options_.verbose) std::fprintf(stderr, "hvdrun: %s\n", line.c_str());
}

}  // namespace hvdrun
