// Agent: the per-host half of a job. It speaks the agent protocol (common/protocol/agent_protocol.h) on a
// pair of file descriptors, starts the ranks the launcher asks for, forwards their output and
// exit statuses, and makes sure that none of them outlives the job.
//
// Guarantees, whatever the launcher does:
//  - Terminate, a closed or broken control stream, a protocol error, a launcher silent for
//    longer than the hello's heartbeat timeout, or SIGTERM, SIGHUP or SIGINT to the agent (srun's,
//    or slurmstepd's when the Slurm job is cancelled) all stop every rank: SIGTERM to each rank's
//    process group, SIGKILL after the launch's grace period. After a signal the agent goes on
//    reporting the ranks' ends, then exits with 128 + the signal's number.
//  - The node is named, in the answer to the launcher, by Slurm's name for it (SLURMD_NODENAME)
//    when slurmd started the agent, else by the host name: several slurmd may share one machine.
//  - When a rank's main process exits, the rest of its process group is killed.
//  - Launch may come again while the agent runs (an elastic job that grows): each one starts its
//    ranks beside those already started; a rank number this agent has used before is refused.
//  - Run() returns only when no rank is left running, nor anything a rank started: the agent is
//    a child subreaper, so orphaned descendants become its children, and it reaps them.
//  - Every progress period (1 s, counted from Launch) it sends a RankProgress for each running rank,
//    read from /proc and from the rank's progress board, a file in a private temporary directory
//    that the agent names in the rank's HVDRUN_PROGRESS_FILE and removes when Run() returns;
//    ProgressRequest gets the same at once. A rank that ends other than with exit code 0 gets one
//    last RankProgress, with its flight recorder, just before its RankExited.
//
// Single-threaded; Run() owns the calling thread, SIGCHLD, SIGTERM, SIGHUP, SIGINT and SIGPIPE for
// its duration.
#ifndef HVDRUN_AGENT_AGENT_H_
#define HVDRUN_AGENT_AGENT_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "agent/rank_watch.h"
#include "common/process/file_descriptor.h"
#include "common/process/line_splitter.h"
#include "common/process/signal_watch.h"
#include "common/protocol/agent_protocol.h"

namespace hvdrun {

class Agent {
 public:
  // Reads the launcher's frames from `control_in` and writes its own to `control_out`; takes both.
  Agent(UniqueFd control_in, UniqueFd control_out);

  // Runs until the launcher is done with this agent. Returns the process exit code: 0 after a
  // normal end, 3 after a protocol error or a launcher that fell silent. Versions are compared by
  // the launcher, not here.
  int Run();

 private:
  using Clock = std::chrono::steady_clock;

  struct Rank {
    int32_t rank = 0;
    pid_t pid = -1;
    bool running = false;
    UniqueFd out_fd;
    UniqueFd err_fd;
    LineSplitter out_lines;
    LineSplitter err_lines;
    RankWatch watch;
  };

  // A descriptor the event loop polls: a rank's stream (`rank` set), the control stream or the signals.
  struct PolledFd {
    int fd = -1;
    Rank* rank = nullptr;
    protocol::OutputStream stream = protocol::OutputStream::kStdout;
  };

  // The steps of one round of Run's event loop.
  std::vector<PolledFd> PolledFds() const;
  // Until the next heartbeat to send or expect, or the kill deadline; at most a minute.
  int PollTimeoutMs() const;
  void HandleReady(const PolledFd& polled);
  // A stop signal stops every rank (once); SIGCHLD reaps.
  void HandleSignals();
  // Kills what outlived the grace period, notices a silent launcher, sends a heartbeat when due.
  void KeepDeadlines();

  void HandleControlInput();
  void HandleMessage(protocol::Message message);
  void HandleHello(const protocol::Hello& hello);
  void HandleLaunch(const protocol::Launch& launch);
  void ReapChildren();
  // A waitpid status of `pid` that is a stop or a continuation: tells the rank's watch.
  void NoteStopOrContinue(pid_t pid, int status);
  // A RankProgress for every running rank (with their flight recorders when `with_records`).
  void SendProgress(bool with_records);
  // The private directory of the ranks' progress boards, made at Launch; empty when it could not be.
  std::string BoardPath(int32_t rank) const;
  // Reads what `fd` holds now; on end of file closes it and emits the stream's last line.
  void DrainOutput(Rank& rank, protocol::OutputStream stream);
  void StartTermination();
  void KillRemaining();
  void Send(const protocol::Message& message);
  void Flush();
  void Fail(const std::string& message);
  int RunningRanks() const;

  UniqueFd control_in_;
  UniqueFd control_out_;
  std::unique_ptr<SignalWatch> signals_;  // SIGCHLD and the stop signals
  protocol::FrameDecoder decoder_;
  std::string outgoing_;

  bool hello_done_ = false;
  bool launcher_gone_ = false;  // control stream closed or broken: stop and exit
  int stop_signal_ = 0;         // SIGTERM, SIGHUP or SIGINT received: stop the ranks and exit
  bool terminating_ = false;
  bool killed_ = false;  // SIGKILL sent: no deadline left to wait for
  int exit_code_ = 0;
  std::chrono::milliseconds heartbeat_interval_{0};
  std::chrono::milliseconds heartbeat_timeout_{0};
  std::chrono::milliseconds kill_grace_{1000};
  Clock::time_point last_heard_;
  Clock::time_point last_sent_;
  Clock::time_point kill_deadline_;
  Clock::time_point next_progress_;
  std::string board_dir_;
  std::vector<std::unique_ptr<Rank>> ranks_;
};

}  // namespace hvdrun

#endif  // HVDRUN_AGENT_AGENT_H_
