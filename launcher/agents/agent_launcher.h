// AgentLauncher: a job's ranks started by hvdrun's own agents (RankLauncher), one hvdrun-agent per
// host: a child process for a host that is this machine, over SSH for any other
// (launcher/agents/agent_connection.h); with --launcher slurm, through srun on every node, this machine's
// included (the allocation's resources are the step's); with --launcher local, a child process for
// every host, each of which must be this machine. Inside an allocation, the agent's path on the
// nodes is --agent-path when given, else this machine's own (nodes share the install). Each agent answers
// hvdrun's Hello with its version, a free port and its interfaces (and its host's facts when asked), starts
// its ranks on Launch, and reports their output and ends (docs/protocol.md).
//
// Reaching: every host is reached at once. A host fails, with its one line naming the stage, when
// its agent cannot start, does not answer within --start-timeout, answers with another protocol
// (for a job also: another hvdrun version), reports an error, or breaks the protocol.
//
// Running: agents report in every second, and hvdrun to them; an agent silent for
// --heartbeat-timeout has failed, and its ranks are lost. Stop() tells every agent to terminate its
// ranks (SIGTERM, SIGKILL after a grace period; at once for StopMode::kNow). When an agent on this
// machine dies or hangs, hvdrun SIGKILLs its ranks' process groups itself. ShutDown() closes every
// agent's input, which ends it, and kills an agent that has not exited a few seconds later; it waits
// on the agents' streams and ends (launcher/agents/process_exit_watch.h), never on a fixed interval.
//
// Growing (an elastic job, launcher/agents/agent_growth.cc): AddHost() reaches one more host as
// Reach() does, with its own --start-timeout; a failure there is no failure of the job (StatusOf()
// says it). LaunchMore() sends a further Launch to a host's agent, which starts those ranks beside
// its running ones.
//
// Not thread-safe; runs on hvdrun's main thread.
#ifndef HVDRUN_LAUNCHER_AGENTS_AGENT_LAUNCHER_H_
#define HVDRUN_LAUNCHER_AGENTS_AGENT_LAUNCHER_H_

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launcher/agents/agent_connection.h"
#include "launcher/launch_options.h"
#include "launcher/rank_launcher.h"

namespace hvdrun {

class AgentLauncher : public RankLauncher {
 public:
  enum class Purpose {
    kJob,    // run ranks: heartbeats, and every host must run this hvdrun's version
    kCheck,  // hvdrun --check: only the hosts' answers, with their facts; versions are compared later
  };

  // `local_agent_path`: the hvdrun-agent program for hosts that are this machine.
  AgentLauncher(const LaunchOptions& options, std::string local_agent_path, Purpose purpose = Purpose::kJob);
  ~AgentLauncher() override;

  void Reach(const RankAssignment& assignment, RankEvents* events) override;
  bool Reached() const override;
  const ReachedHost& host(int host_index) const override { return agents_.at(host_index).reached; }
  LocalAddress LocalAddressTowardHosts() const override;
  Status Launch(const JobLaunch& launch) override;
  void AddPollFds(std::vector<pollfd>& fds) override;
  int PollTimeoutMs() const override;
  void Service(const pollfd* fds, size_t count) override;
  void ChildExited() override {}  // an agent's end shows as the end of its stream
  // Sends ProgressRequest to every agent that runs ranks; the RankProgress answers reach RankEvents.
  bool RequestProgress(bool with_recorder) override;
  void Stop(StopMode mode) override;
  bool Done() const override;
  void ShutDown() override;
  Ending Finish(const Verdict& /*verdict*/) override { return {}; }
  bool CanGrow() const override { return purpose_ == Purpose::kJob; }
  int AddHost(const HostSlots& host) override;
  HostStatus StatusOf(int host_index, std::string* why) const override;
  Status LaunchMore(int host_index, const std::vector<protocol::RankLaunch>& ranks) override;

  // Host `host_index`'s answer (for --check); nullptr when it has not answered.
  const protocol::AgentHello* hello(int host_index) const;
  // Whether host `host_index` was reached over SSH rather than started here.
  bool remote(int host_index) const;
  // How the agents are started (--launcher).
  AgentStart agent_start() const { return agent_start_; }

 private:
  using Clock = std::chrono::steady_clock;

  // Between SIGTERM and SIGKILL when a job stops: long enough for a rank to flush its logs, short
  // enough that a failed job is over in about a second.
  static constexpr std::chrono::milliseconds kKillGrace{1000};

  struct HostAgent {
    std::string host;
    std::unique_ptr<AgentConnection> connection;  // null when the agent could not be started
    std::vector<int> ranks;
    bool local = false;     // its rank pids are this machine's, so hvdrun can kill their groups
    bool answered = false;  // its AgentHello arrived
    bool failed = false;    // it can no longer be relied on (reported)
    bool told_to_stop = false;
    std::string failure;  // why it failed, in one line
    protocol::AgentHello hello;
    ReachedHost reached;
    Clock::time_point last_heard;
    Clock::time_point start_deadline;  // it must answer by then (--start-timeout)
  };

  // Starts `agent`'s agent on `host` (`user`: its SSH login, empty for --ssh-user's) and says Hello.
  void StartAgent(HostAgent& agent, const std::string& host, const std::string& user);
  // `agent` could not be started: before the launch its host fails the job's start.
  void StartFailedAt(HostAgent& agent, const std::string& reason);

  void Answered(HostAgent& agent, const protocol::AgentHello& hello);
  void HandleInput(HostAgent& agent);
  void HandleMessage(HostAgent& agent, protocol::Message message);
  // `agent` can no longer be relied on: before the launch its host fails the start; after it,
  // every rank the agent still had is lost.
  void AgentFailed(HostAgent& agent, const std::string& reason);
  // SIGKILL to the process group of every rank of `agent` not known to have ended, for an agent on
  // this machine that died or hangs: its ranks' own children would otherwise outlive it.
  void KillRankGroups(const HostAgent& agent);
  void CheckTimers();
  // ShutDown's steps. Which agents have exited (and are reaped now); kills those that have not
  // (the first time saying so); waits until an agent's stream has input or it ends, or `deadline`.
  std::vector<bool> ReapAgents();
  void KillUnreaped(const std::vector<bool>& reaped, bool first);
  void WaitForAgents(const std::vector<bool>& reaped, std::optional<Clock::time_point> deadline);
  int IndexOf(const HostAgent& agent) const;
  // The agent's path on the nodes under --launcher slurm.
  std::string SlurmAgentPath() const;
  void Verbose(const std::string& line) const;

  const std::string local_agent_path_;
  const std::string remote_agent_path_;
  const SshOptions ssh_;
  const AgentStart agent_start_;
  const int start_timeout_s_;
  const int heartbeat_timeout_s_;
  const bool want_facts_;
  const bool verbose_;
  const Purpose purpose_;

  RankEvents* events_ = nullptr;
  RankAssignment assignment_;
  std::deque<HostAgent> agents_;    // a deque: AddHost() keeps references to the others valid
  std::vector<HostAgent*> polled_;  // the agent of each descriptor AddPollFds added, in order
  std::vector<int> rank_pids_;      // by rank; 0 until the rank started
  std::vector<bool> rank_done_;     // by rank: ended or lost
  bool launched_ = false;
  bool shutting_down_ = false;  // agents that end now are ending as asked
  Clock::time_point last_heartbeat_sent_;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_AGENTS_AGENT_LAUNCHER_H_
