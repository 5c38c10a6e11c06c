#include "launcher/agents/agent_launcher.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>

#include "common/exit_codes.h"
#include "common/host/network_interfaces.h"
#include "common/version.h"
#include "launcher/local_host.h"

namespace hvdrun {
namespace {

// Agents report in at this interval; one silent for --heartbeat-timeout has failed.
constexpr std::chrono::milliseconds kHeartbeatInterval{1000};
// How long agents get to exit once their input is closed, beyond the kill grace.
constexpr std::chrono::milliseconds kAgentExitWait{3000};
// How often ShutDown looks again for an agent whose end no descriptor announces (rare: see
// WaitForAgents); every other end is an event it waits on.
constexpr int kUnwatchedPollMs = 10;

// Milliseconds from now until `deadline`, for poll(); 0 once it has passed.
int MillisecondsUntil(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<int64_t>(left.count(), 0));
}

std::string RankList(const std::vector<int>& ranks) {
  if (ranks.empty()) return "none";
  if (ranks.size() == 1) return std::to_string(ranks.front());
  return std::to_string(ranks.front()) + "-" + std::to_string(ranks.back());
}

// `message` without its leading "host <host>: ", which the job's line puts back.
std::string WithoutHost(const std::string& message, const std::string& host) {
  std::string prefix = "host " + host + ": ";
  return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

}  // namespace

AgentLauncher::AgentLauncher(const LaunchOptions& options, std::string local_agent_path, Purpose purpose)
    : local_agent_path_(std::move(local_agent_path)),
      remote_agent_path_(options.remote_agent_path),
      ssh_(options.ssh),
      agent_start_(options.agent_start),
      start_timeout_s_(options.start_timeout_s),
      heartbeat_timeout_s_(options.heartbeat_timeout_s),
      want_facts_(purpose == Purpose::kCheck || !options.results_dir.empty()),
      verbose_(options.verbose),
      purpose_(purpose) {}

AgentLauncher::~AgentLauncher() = default;

void AgentLauncher::Reach(const RankAssignment& assignment, RankEvents* events) {
  events_ = events;
  assignment_ = assignment;
  rank_pids_.assign(assignment.size(), 0);
  rank_done_.assign(assignment.size(), false);
  last_heartbeat_sent_ = Clock::now();
  agents_.resize(assignment.hosts().size());
  for (size_t i = 0; i < agents_.size(); ++i) {
    const HostRanks& host = assignment.hosts()[i];
    agents_[i].ranks = host.ranks;
    StartAgent(agents_[i], host.host, host.user);
  }
}

void AgentLauncher::StartAgent(HostAgent& agent, const std::string& host, const std::string& user) {
  agent.host = host;
  const bool slurm = agent_start_ == AgentStart::kSlurm;
  agent.local = !slurm && RunsHere(host, user);
  agent.reached.this_machine = agent.local;
  agent.last_heard = Clock::now();
  agent.start_deadline = Clock::now() + std::chrono::seconds(start_timeout_s_);
  if (agent_start_ == AgentStart::kLocal && !agent.local) {
    StartFailedAt(agent, "agent start: --launcher local starts agents on this machine only, and host " +
                             host + " is not this machine (give --launcher ssh)");
    return;
  }
  if (slurm) {
    // The node's address, where the job's traffic reaches its ranks (an agent through srun has no
    // connection of its own to learn it from).
    StatusOr<std::string> address = ResolveIpv4(host);
    if (!address.ok()) {
      StartFailedAt(agent, WithoutHost(address.status().message(), host));
      return;
    }
    agent.reached.address = std::move(address).value();
  }
  SshOptions ssh = ssh_;
  if (!user.empty()) ssh.user = user;  // user@host overrides --ssh-user
  StatusOr<std::unique_ptr<AgentConnection>> connection =
      slurm         ? AgentConnection::StartSlurm(host, SlurmAgentPath())
      : agent.local ? AgentConnection::StartLocal(host, local_agent_path_)
                    : AgentConnection::StartRemote(host, ssh, remote_agent_path_, agent.start_deadline);
  if (!connection.ok()) {
    StartFailedAt(agent, WithoutHost(connection.status().message(), host));
    return;
  }
  agent.connection = std::move(connection).value();
  Verbose("host " + host + ": agent " +
          (slurm         ? "starting through srun (pid " + std::to_string(agent.connection->pid()) + ")"
           : agent.local ? "started (pid " + std::to_string(agent.connection->pid()) + ")"
                         : "starting over SSH") +
          ", ranks " + RankList(agent.ranks));
  protocol::Hello hello;
  hello.hvdrun_version = kVersion;
  hello.want_facts = want_facts_;
  // --check: no heartbeats; the agent answers, then waits for its input to close.
  if (purpose_ == Purpose::kJob) {
    hello.heartbeat_interval_ms = static_cast<uint32_t>(kHeartbeatInterval.count());
    hello.heartbeat_timeout_ms = static_cast<uint32_t>(heartbeat_timeout_s_ * 1000);
  }
  agent.connection->Send(hello);
}

void AgentLauncher::StartFailedAt(HostAgent& agent, const std::string& reason) {
  agent.failed = true;
  agent.failure = reason;
  if (!launched_) events_->StartFailed(IndexOf(agent), reason, kExitLaunchFailure);
}

bool AgentLauncher::Reached() const {
  return std::all_of(agents_.begin(), agents_.end(),
                     [](const HostAgent& a) { return a.answered || a.failed; });
}

RankLauncher::LocalAddress AgentLauncher::LocalAddressTowardHosts() const {
  for (const HostAgent& agent : agents_) {
    if (agent_start_ == AgentStart::kSlurm && !agent.reached.address.empty()) {
      StatusOr<std::string> local = LocalAddressToward(agent.reached.address);
      if (local.ok()) return {std::move(local).value(), "the local address of the route to " + agent.host};
    }
    if (agent.connection == nullptr || !agent.connection->remote()) continue;
    return {agent.connection->transport()->local_address(),
            "the local end of the SSH connection to " + agent.host};
  }
  return {};
}

const protocol::AgentHello* AgentLauncher::hello(int host_index) const {
  const HostAgent& agent = agents_.at(host_index);
  return agent.answered ? &agent.hello : nullptr;
}

bool AgentLauncher::remote(int host_index) const {
  const HostAgent& agent = agents_.at(host_index);
  return agent.connection != nullptr && agent.connection->remote();
}

Status AgentLauncher::Launch(const JobLaunch& launch) {
  // Every host's Launch is built, and checked to fit one frame, before any is sent: a job too big
  // for a host starts no rank anywhere. The check stops at the first rank that does not fit, so
  // that a huge -np fails at once.
  const size_t empty_frame = protocol::EncodeFrame(protocol::Launch{}).size();
  std::vector<protocol::Launch> messages(agents_.size());
  for (size_t i = 0; i < agents_.size(); ++i) {
    const HostAgent& agent = agents_[i];
    messages[i].kill_grace_ms = static_cast<uint32_t>(kKillGrace.count());
    size_t frame_bytes = empty_frame;
    for (int rank : agent.ranks) {
      protocol::RankLaunch rank_launch{rank, launch.command,
                                       BuildRankEnvironment(assignment_, rank, launch.environment),
                                       launch.working_dir};
      if (static_cast<size_t>(rank) < launch.rank_variables.size()) {
        for (const std::string& variable : launch.rank_variables[rank]) {
          const size_t equals = variable.find('=');
          SetEnvironmentValue(rank_launch.env, variable.substr(0, equals).c_str(),
                              variable.substr(equals + 1));
        }
      }
      frame_bytes += protocol::EncodedSize(rank_launch);
      if (frame_bytes > protocol::kMaxFrameBytes) {
        return Status::Error(
            "host " + agent.host + ": its " + std::to_string(agent.ranks.size()) +
            " ranks' commands and environments do not fit the " + std::to_string(protocol::kMaxFrameBytes) +
            " bytes the agent protocol's Launch carries (full at rank " + std::to_string(rank) +
            "); put fewer ranks on each host (more hosts, or a lower -np)");
      }
      messages[i].ranks.push_back(std::move(rank_launch));
    }
  }
  for (size_t i = 0; i < agents_.size(); ++i) agents_[i].connection->Send(messages[i]);
  launched_ = true;
  return Status::Ok();
}

void AgentLauncher::AddPollFds(std::vector<pollfd>& fds) {
  polled_.clear();
  for (HostAgent& agent : agents_) {
    if (agent.connection == nullptr || agent.connection->stream_closed()) continue;
    fds.push_back({agent.connection->read_fd(), POLLIN, 0});
    polled_.push_back(&agent);
  }
}

int AgentLauncher::PollTimeoutMs() const { return static_cast<int>(kHeartbeatInterval.count()); }

void AgentLauncher::Service(const pollfd* fds, size_t count) {
  for (size_t i = 0; i < count && i < polled_.size(); ++i) {
    if (fds[i].revents != 0) HandleInput(*polled_[i]);
  }
  CheckTimers();
}

void AgentLauncher::HandleInput(HostAgent& agent) {
  std::vector<protocol::Message> messages;
  Status status = agent.connection->ReadMessages(&messages);
  if (!messages.empty()) agent.last_heard = Clock::now();
  for (protocol::Message& message : messages) HandleMessage(agent, std::move(message));
  if (!status.ok()) {
    AgentFailed(agent, "protocol error: " + status.message());
  } else if (agent.connection->stream_closed()) {
    bool ranks_left =
        std::any_of(agent.ranks.begin(), agent.ranks.end(), [&](int rank) { return !rank_done_[rank]; });
    // An agent added while the job runs that ends before it answered failed to start.
    if (!launched_ || ranks_left || !agent.answered) AgentFailed(agent, agent.connection->EndReason());
  }
}

void AgentLauncher::HandleMessage(HostAgent& agent, protocol::Message message) {
  // Every rank message must be about one of this agent's ranks.
  std::optional<int32_t> rank;
  if (auto* output = std::get_if<protocol::RankOutput>(&message)) rank = output->rank;
  if (auto* started = std::get_if<protocol::RankStarted>(&message)) rank = started->rank;
  if (auto* exited = std::get_if<protocol::RankExited>(&message)) rank = exited->rank;
  if (auto* progress = std::get_if<protocol::RankProgress>(&message)) rank = progress->rank;
  if (rank && std::find(agent.ranks.begin(), agent.ranks.end(), *rank) == agent.ranks.end()) {
    AgentFailed(
        agent, "protocol error: the agent reported rank " + std::to_string(*rank) + ", not one of its ranks");
    return;
  }
  if (auto* output = std::get_if<protocol::RankOutput>(&message)) {
    events_->RankOutput(*output);
  } else if (auto* started = std::get_if<protocol::RankStarted>(&message)) {
    rank_pids_[started->rank] = started->pid;
    events_->RankStarted(started->rank, started->pid);
  } else if (auto* exited = std::get_if<protocol::RankExited>(&message)) {
    if (rank_done_[exited->rank]) return;
    rank_done_[exited->rank] = true;
    events_->RankEnded(RankEnd{.exit = *exited, .stop_requested = agent.told_to_stop});
  } else if (auto* progress = std::get_if<protocol::RankProgress>(&message)) {
    if (rank_done_[progress->rank]) return;
    const int64_t now_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
    events_->RankProgressed(RankStateFromProgress(*progress, now_unix_ms));
  } else if (auto* hello = std::get_if<protocol::AgentHello>(&message)) {
    Answered(agent, *hello);
  } else if (auto* error = std::get_if<protocol::AgentError>(&message)) {
    AgentFailed(agent, error->message);
  } else if (!std::holds_alternative<protocol::Heartbeat>(message)) {
    AgentFailed(agent, "protocol error: the agent sent a launcher's message (" +
                           std::string(protocol::MessageName(message)) + ")");
  }
}

bool AgentLauncher::RequestProgress(bool with_recorder) {
  if (!launched_) return false;
  for (HostAgent& agent : agents_) {
    if (agent.answered && !agent.failed && !agent.connection->stream_closed()) {
      agent.connection->Send(protocol::ProgressRequest{.with_recorder = with_recorder});
    }
  }
  return true;
}

void AgentLauncher::Answered(HostAgent& agent, const protocol::AgentHello& hello) {
  if (agent.answered || agent.failed) return;
  bool other_version = hello.protocol_version != protocol::kProtocolVersion ||
                       (purpose_ == Purpose::kJob && hello.hvdrun_version != kVersion);
  if (other_version) {
    AgentFailed(agent, "version mismatch: its hvdrun-agent is " + hello.hvdrun_version + " (protocol " +
                           std::to_string(hello.protocol_version) + "), this hvdrun is " + kVersion +
                           " (protocol " + std::to_string(protocol::kProtocolVersion) +
                           "); install the same hvdrun on every host");
    return;
  }
  agent.answered = true;
  agent.hello = hello;
  agent.reached.interfaces_known = true;
  agent.reached.interfaces = hello.interfaces;
  agent.reached.free_port = hello.free_port;
  agent.reached.facts = hello.facts;
  if (agent.connection->remote()) agent.reached.address = agent.connection->transport()->remote_address();
  Verbose("host " + agent.host + ": agent ready (" + hello.hostname + ", hvdrun-agent " +
          hello.hvdrun_version + ")");
}

void AgentLauncher::AgentFailed(HostAgent& agent, const std::string& reason) {
  if (agent.failure.empty()) {
    agent.failure = agent.answered ? reason : agent.connection->Stage() + ": " + reason;
  }
  if (!launched_) {
    // Once every host has answered or failed, agents that end are being shut down.
    if (!agent.failed && !Reached() && !shutting_down_) {
      agent.failed = true;
      events_->StartFailed(IndexOf(agent), agent.connection->Stage() + ": " + reason, kExitLaunchFailure);
    }
    agent.failed = true;
    if (agent.connection->remote()) agent.connection->Kill();
    return;
  }
  agent.failed = true;
  // Before the ranks are marked done below: the groups of ranks whose end was not reported are
  // killed (on this machine; a remote agent's ranks are stopped by that host's agent).
  KillRankGroups(agent);
  const bool stop_requested = agent.told_to_stop;
  for (int rank : agent.ranks) {
    if (rank_done_[rank]) continue;
    rank_done_[rank] = true;
    events_->RankLost(rank, "agent failed: " + reason, stop_requested);
  }
  agent.connection->CloseInput();
  // A remote agent that failed is not waited for: dropping its connection closes its stdin, or,
  // when the host is cut off, the agent's own heartbeat timeout stops its ranks.
  if (agent.connection->remote()) agent.connection->Kill();
}

void AgentLauncher::KillRankGroups(const HostAgent& agent) {
  if (!agent.local) return;
  for (int rank : agent.ranks) {
    // Each rank leads its own process group, whose id is the rank's pid. The agent reaps its
    // ranks, so a pid whose end was not reported still names the rank's group.
    if (rank_pids_[rank] > 0 && !rank_done_[rank]) ::killpg(rank_pids_[rank], SIGKILL);
  }
}

void AgentLauncher::CheckTimers() {
  Clock::time_point now = Clock::now();
  for (HostAgent& agent : agents_) {
    if (!agent.answered && !agent.failed && now >= agent.start_deadline) {
      AgentFailed(agent, "no answer within " + std::to_string(start_timeout_s_) + " s (--start-timeout)");
    }
  }
  if (purpose_ != Purpose::kJob) return;
  // Until an agent has answered, --start-timeout alone judges it; after that, heartbeats do.
  for (HostAgent& agent : agents_) {
    if (agent.answered && !agent.connection->stream_closed() &&
        now - agent.last_heard > std::chrono::seconds(heartbeat_timeout_s_)) {
      AgentFailed(agent,
                  "no heartbeat for " + std::to_string(heartbeat_timeout_s_) + " s (--heartbeat-timeout)");
    }
  }
  if (now - last_heartbeat_sent_ >= kHeartbeatInterval) {
    for (HostAgent& agent : agents_) {
      if (agent.answered) agent.connection->Send(protocol::Heartbeat{});
    }
    last_heartbeat_sent_ = now;
  }
}

void AgentLauncher::Stop(StopMode mode) {
  for (HostAgent& agent : agents_) {
    if (agent.connection == nullptr) continue;
    agent.told_to_stop = true;
    agent.connection->Send(protocol::Terminate{.immediate = mode == StopMode::kNow});
  }
}

bool AgentLauncher::Done() const {
  return launched_ && std::all_of(rank_done_.begin(), rank_done_.end(), [](bool done) { return done; });
}

void AgentLauncher::ShutDown() {
  shutting_down_ = true;
  for (HostAgent& agent : agents_) {
    if (agent.connection != nullptr) agent.connection->CloseInput();
  }
  Clock::time_point deadline = Clock::now() + kKillGrace + kAgentExitWait;
  // The first kill of an agent through srun is a SIGTERM that srun passes on; one that is still
  // there kAgentExitWait later (its node is gone) is killed again, for good.
  int kills = 0;
  while (true) {
    std::vector<bool> reaped = ReapAgents();
    if (std::all_of(reaped.begin(), reaped.end(), [](bool r) { return r; })) return;
    if (kills < 2 && Clock::now() >= deadline) {
      KillUnreaped(reaped, /*first=*/kills == 0);
      ++kills;
      deadline = Clock::now() + kAgentExitWait;
    }
    WaitForAgents(reaped, kills < 2 ? std::optional(deadline) : std::nullopt);
  }
}

std::vector<bool> AgentLauncher::ReapAgents() {
  std::vector<bool> reaped(agents_.size(), true);
  for (size_t i = 0; i < agents_.size(); ++i) {
    int status = 0;
    if (agents_[i].connection != nullptr && !agents_[i].connection->Reap(&status)) reaped[i] = false;
  }
  return reaped;
}

void AgentLauncher::KillUnreaped(const std::vector<bool>& reaped, bool first) {
  for (size_t i = 0; i < agents_.size(); ++i) {
    HostAgent& agent = agents_[i];
    if (reaped[i]) continue;
    if (first) {
      std::fprintf(stderr, "hvdrun: host %s: the agent did not exit; killing it\n", agent.host.c_str());
    }
    agent.connection->Kill();
    KillRankGroups(agent);
  }
}

void AgentLauncher::WaitForAgents(const std::vector<bool>& reaped,
                                  std::optional<Clock::time_point> deadline) {
  // Keep reading: an agent blocked on a full pipe could not exit.
  std::vector<pollfd> fds;
  AddPollFds(fds);
  const size_t streams = fds.size();
  // An agent without an event to wait on: a remote one whose stream broke before its connection
  // ended, or any agent on a kernel without pidfds.
  bool unwatched = false;
  for (size_t i = 0; i < agents_.size(); ++i) {
    if (reaped[i]) continue;
    const AgentConnection& connection = *agents_[i].connection;
    if (connection.exit_fd() >= 0) {
      fds.push_back({connection.exit_fd(), POLLIN, 0});
    } else if (connection.stream_closed()) {
      unwatched = true;
    }
  }
  int timeout_ms = -1;
  if (deadline) timeout_ms = MillisecondsUntil(*deadline);
  if (unwatched) timeout_ms = timeout_ms < 0 ? kUnwatchedPollMs : std::min(timeout_ms, kUnwatchedPollMs);
  if (::poll(fds.data(), fds.size(), timeout_ms) <= 0) return;
  for (size_t i = 0; i < streams; ++i) {
    if (fds[i].revents != 0) HandleInput(*polled_[i]);
  }
}

std::string AgentLauncher::SlurmAgentPath() const {
  // main.cc sets the fallback to this machine's agent when --agent-path is not given.
  return ssh_.agent_fallback_path.empty() ? remote_agent_path_ : ssh_.agent_fallback_path;
}

int AgentLauncher::IndexOf(const HostAgent& agent) const {
  for (size_t i = 0; i < agents_.size(); ++i) {
    if (&agents_[i] == &agent) return static_cast<int>(i);
  }
  return -1;
}

void AgentLauncher::Verbose(const std::string& line) const {
  if (verbose_) std::fprintf(stderr, "hvdrun: %s\n", line.c_str());
}

}  // namespace hvdrun
