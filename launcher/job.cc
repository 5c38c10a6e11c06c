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
#include <random>

#include "common/exit_codes.h"
#include "common/job_secret.h"
#include "common/version.h"
#include "launcher/local_host.h"
#include "launcher/rank_environment.h"
#include "launcher/results_writer.h"
#include "launcher/run_summary.h"

namespace hvdrun {
namespace {

// Agents report in at this interval, and one silent for kHeartbeatTimeout has failed.
constexpr std::chrono::milliseconds kHeartbeatInterval{1000};
constexpr std::chrono::milliseconds kHeartbeatTimeout{30000};
// Between SIGTERM and SIGKILL when a job stops: long enough for a rank to flush its logs, short
// enough that a failed job is over in about a second.
constexpr std::chrono::milliseconds kKillGrace{1000};
// Where the rendezvous service listens: every host of a job is this machine in this version.
constexpr const char* kRendezvousAddress = "127.0.0.1";
// How long agents get to exit once their ranks have ended, beyond the kill grace.
constexpr std::chrono::milliseconds kAgentExitWait{3000};

std::string NewJobId() {
  std::random_device random;
  char id[17];
  std::snprintf(id, sizeof(id), "%08x%08x", random(), random());
  return id;
}

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
  StatusOr<RankAssignment> assignment = RankAssignment::Assign(options_.hosts, options_.num_proc);
  if (!assignment.ok()) {
    std::fprintf(stderr, "hvdrun: %s\n", assignment.status().message().c_str());
    return kExitUsage;
  }
  assignment_ = std::move(assignment).value();
  for (const HostRanks& host : assignment_.hosts()) {
    if (!IsLocalHost(host.host)) {
      std::fprintf(stderr,
                   "hvdrun: host '%s' is not this machine, and this hvdrun starts ranks on this machine only "
                   "(use localhost, 127.0.0.1 or this machine's own name or address)\n",
                   host.host.c_str());
      return kExitUsage;
    }
  }
  if (!options_.output_dir.empty()) {
    if (Status status = output_.OpenRankFiles(options_.output_dir, assignment_.size()); !status.ok()) {
      std::fprintf(stderr, "hvdrun: %s\n", status.message().c_str());
      return kExitUsage;
    }
  }
  for (const RankPlacement& place : assignment_.ranks()) {
    RankOutcome outcome;
    outcome.rank = place.rank;
    outcome.host = assignment_.hosts()[place.host_index].host;
    outcomes_.push_back(outcome);
  }
  job_id_ = NewJobId();
  if (options_.backend) {
    secret_ = NewJobSecret();
    StatusOr<std::unique_ptr<RendezvousServer>> server = RendezvousServer::Start(
        kRendezvousAddress, secret_,
        [](const std::string& line) { std::fprintf(stderr, "hvdrun: %s\n", line.c_str()); });
    if (!server.ok()) {
      std::fprintf(stderr, "hvdrun: rendezvous: %s\n", server.status().message().c_str());
      return kExitLaunchFailure;
    }
    rendezvous_ = std::move(server).value();
    Verbose("rendezvous service on " + std::string(kRendezvousAddress) + ":" +
            std::to_string(rendezvous_->port()));
  }
  if (!SetUpSignals()) return kExitLaunchFailure;
  if (!StartAgents()) {
    ShutDownAgents();
    return kExitLaunchFailure;
  }

  start_deadline_ = Clock::now() + std::chrono::seconds(options_.start_timeout_s);
  last_heartbeat_sent_ = Clock::now();
  while (!start_failed_ && !(launched_ && AllRanksEnded())) {
    if (!launched_ && !stopping_ &&
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
  std::map<int, std::string> reports;
  if (rendezvous_) reports = rendezvous_->Reports();
  RunSummary summary = SummarizeReports(reports);
  for (const std::string& problem : summary.problems) {
    std::fprintf(stderr, "hvdrun: report of %s\n", problem.c_str());
  }
  std::fputs(FormatRunSummary(summary).c_str(), stdout);
  std::fflush(stdout);
  if (options_.results_dir.empty()) return Status::Ok();
  return WriteResults(options_.results_dir, PlanToJson(assignment_, options_, job_id_), reports,
                      RunSummaryToJson(summary));
}

bool Job::SetUpSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&set, sig);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  signals_.Reset(::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!signals_.valid()) {
    std::fprintf(stderr, "hvdrun: cannot watch signals: %s\n", std::strerror(errno));
    return false;
  }
  return true;
}

bool Job::StartAgents() {
  for (const HostRanks& host : assignment_.hosts()) {
    StatusOr<std::unique_ptr<AgentConnection>> connection =
        AgentConnection::StartLocal(host.host, agent_path_);
    if (!connection.ok()) {
      std::fprintf(stderr, "hvdrun: %s\n", connection.status().message().c_str());
      return false;
    }
    HostAgent agent;
    agent.connection = std::move(connection).value();
    agent.ranks = host.ranks;
    agent.local = true;
    agent.last_heard = Clock::now();
    Verbose("host " + host.host + ": agent started (pid " + std::to_string(agent.connection->pid()) +
            "), ranks " + RankList(host.ranks));
    protocol::Hello hello;
    hello.hvdrun_version = kVersion;
    hello.heartbeat_interval_ms = static_cast<uint32_t>(kHeartbeatInterval.count());
    hello.heartbeat_timeout_ms = static_cast<uint32_t>(kHeartbeatTimeout.count());
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
      start_failed_ = true;
      return;
    }
  }
  const HostAgent& rank0_agent = agents_.front();
  JobEnvironment job;
  job.job_id = job_id_;
  job.master_addr = HostAddress(rank0_agent.connection->host());
  job.master_port = rank0_agent.hello.free_port;
  job.exports = options_.exports;
  if (rendezvous_) {
    job.backend = std::string(BackendName(*options_.backend));
    job.rendezvous_addr = kRendezvousAddress;
    job.rendezvous_port = rendezvous_->port();
    job.secret = secret_;
  }
  Verbose("job " + job.job_id + ": " + std::to_string(assignment_.size()) + " ranks on " +
          std::to_string(agents_.size()) + " hosts; MASTER_ADDR=" + job.master_addr +
          " MASTER_PORT=" + std::to_string(job.master_port));
  std::string working_dir = WorkingDirectory();
  for (HostAgent& agent : agents_) {
    protocol::Launch launch;
    launch.kill_grace_ms = static_cast<uint32_t>(kKillGrace.count());
    for (int rank : agent.ranks) {
      launch.ranks.push_back(protocol::RankLaunch{rank, options_.command,
                                                  BuildRankEnvironment(assignment_, rank, job), working_dir});
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
    if (!launched_ || ranks_left) AgentFailed(agent, "the agent exited unexpectedly");
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
    if (!start_failed_) {
      std::fprintf(stderr, "hvdrun: host %s: agent start: %s\n", agent.connection->host().c_str(),
                   reason.c_str());
    }
    start_failed_ = true;
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
        now - agent.last_heard > kHeartbeatTimeout) {
      AgentFailed(agent, "no heartbeat for " + std::to_string(kHeartbeatTimeout.count() / 1000) + " s");
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

bool Job::AllRanksEnded() const {
  return std::all_of(outcomes_.begin(), outcomes_.end(),
                     [](const RankOutcome& o) { return o.exited || !o.lost_reason.empty(); });
}

int Job::Report() {
  if (start_failed_) return kExitLaunchFailure;
  if (first_failure_ >= 0) {
    const RankOutcome& first = outcomes_[first_failure_];
    if (first.exited && first.exit.spawn_error != protocol::SpawnError::kNone) {
      int others =
          static_cast<int>(std::count_if(outcomes_.begin(), outcomes_.end(), [&](const RankOutcome& o) {
            return o.rank != first.rank && o.exited && o.exit.spawn_error != protocol::SpawnError::kNone;
          }));
      std::string more;
      if (others > 0) {
        more = " (and " + std::to_string(others) + (others == 1 ? " more rank" : " more ranks") +
               " could not start)";
      }
      std::fprintf(stderr, "hvdrun: rank %d on host %s: %s%s\n", first.rank, first.host.c_str(),
                   first.exit.error.c_str(), more.c_str());
      switch (first.exit.spawn_error) {
        case protocol::SpawnError::kNotExecutable:
          return kExitNotExecutable;
        case protocol::SpawnError::kNotFound:
        case protocol::SpawnError::kWorkingDir:
          return kExitNotFound;
        default:
          return kExitLaunchFailure;  // fork or pipe failure on the host
      }
    }
    std::fputs(FormatFailureReport(outcomes_, first_failure_, output_).c_str(), stderr);
    return ExitCodeOf(first);
  }
  if (interrupt_signal_ != 0) {
    std::fprintf(stderr, "hvdrun: stopped by %s\n", SignalName(interrupt_signal_).c_str());
    return 128 + interrupt_signal_;
  }
  return 0;
}

void Job::Verbose(const std::string& line) const {
  if (options_.verbose) std::fprintf(stderr, "hvdrun: %s\n", line.c_str());
}

}  // namespace hvdrun
