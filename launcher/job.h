// Job: one run of a command over the planned ranks, from starting the agents to the exit code.
//
// Run() starts one agent per host, checks each agent's versions, sends every agent its ranks,
// routes their output, and waits until every rank has ended. The first rank that fails (non-zero
// exit, a signal, a program that cannot start, or an agent that vanished) stops the job: every
// agent is told to terminate its ranks (SIGTERM, SIGKILL after a grace period). SIGINT, SIGTERM
// and SIGHUP to hvdrun stop the job the same way; a second SIGINT kills at once. When Run()
// returns, every agent has exited, and so has every rank, also when an agent died: hvdrun then
// kills that agent's rank process groups itself.
//
// Run() takes over SIGINT, SIGTERM, SIGHUP, SIGCHLD and SIGPIPE of the process while it runs; one
// Job runs at a time.
#ifndef HVDRUN_LAUNCHER_JOB_H_
#define HVDRUN_LAUNCHER_JOB_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/agent_protocol.h"
#include "common/file_descriptor.h"
#include "common/rank_assignment.h"
#include "launcher/agent_connection.h"
#include "launcher/failure_report.h"
#include "launcher/launch_options.h"
#include "launcher/output_router.h"
#include "launcher/rendezvous_server.h"

namespace hvdrun {

class Job {
 public:
  // `agent_path`: the hvdrun-agent program for hosts that are this machine.
  Job(LaunchOptions options, std::string agent_path);

  // Returns hvdrun's exit code (common/exit_codes.h, or the first failing rank's code).
  int Run();

 private:
  using Clock = std::chrono::steady_clock;

  struct HostAgent {
    std::unique_ptr<AgentConnection> connection;
    std::vector<int> ranks;
    // On this machine: rank pids are this machine's, so hvdrun can kill their groups itself
    // when the agent cannot.
    bool local = false;
    bool remote() const { return connection->remote(); }
    bool hello_received = false;
    // Its start failed, and that was reported.
    bool start_failed = false;
    protocol::AgentHello hello;
    // With --network-interface: the host's address on the chosen interface (from `hello`).
    std::string interface_address;
    Clock::time_point last_heard;
  };

  bool SetUpSignals();
  bool StartAgents();
  void SendLaunch();
  void PollOnce(int timeout_ms);
  void HandleSignals();
  void HandleAgentInput(HostAgent& agent);
  void HandleMessage(HostAgent& agent, protocol::Message message);
  void HandleRankExited(const protocol::RankExited& exited);
  // The agent of `agent` can no longer be relied on: before launch this fails the start, after it
  // every rank the agent still had is lost.
  void AgentFailed(HostAgent& agent, const std::string& reason);
  // SIGKILL to the process group of every rank of `agent` not known to have ended, for a local
  // agent that died or hangs: its ranks' own children would otherwise outlive it.
  void KillRankGroups(const HostAgent& agent);
  void CheckTimers();
  void BeginStop();
  void ShutDownAgents();
  bool AllRanksEnded() const;
  // Before the launch: whether every agent has answered or failed.
  bool StartSettled() const;
  int Report();
  // Prints the summary of the ranks' reports and, with --results, writes the results directory.
  Status CollectResults();
  void Verbose(const std::string& line) const;
  // With remote hosts: takes the job's address (the local end of the first SSH connection, unless
  // --network-interface chose it) and starts the rendezvous service there. False (printed) when
  // the service cannot start.
  bool StartRemoteJobRendezvous();
  // With --network-interface: each host's address on the first of the interfaces it has. False
  // (one line per host without any of them, printed) when a host has none.
  bool ChooseHostAddresses();
  // The address by which the job's other hosts reach `agent`'s host (MASTER_ADDR, HVDRUN_HOST_ADDR).
  std::string JobAddressOf(const HostAgent& agent) const;

  LaunchOptions options_;
  std::string job_id_;
  std::string secret_;  // the job secret; never printed or stored
  std::unique_ptr<RendezvousServer> rendezvous_;
  std::string agent_path_;
  RankAssignment assignment_;
  OutputRouter output_;
  UniqueFd signals_;
  std::vector<HostAgent> agents_;
  std::vector<RankOutcome> outcomes_;

  Clock::time_point start_deadline_;
  Clock::time_point last_heartbeat_sent_;
  // Whether a host is not this machine, and then the address its hosts reach this one by (also
  // chosen by --network-interface); the rendezvous service listens there.
  bool any_remote_ = false;
  std::string job_address_;
  bool launched_ = false;
  bool start_failed_ = false;
  int start_failure_code_ = 0;  // the exit code of a failed start: kExitLaunchFailure unless set
  bool stopping_ = false;
  int first_failure_ = -1;
  int interrupt_signal_ = 0;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_JOB_H_
