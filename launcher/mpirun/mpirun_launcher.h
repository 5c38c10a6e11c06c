// MpirunLauncher: a job's ranks started by Open MPI's mpirun (`hvdrun --mpi`; RankLauncher).
//
// Reach() refuses what mpirun cannot run as hvdrun places the ranks (CheckMpiHosts, and --ssh-*
// values mpirun cannot pass on: exit 2) and resolves every host that is not this machine, so that
// a wrong name fails with hvdrun's one line rather than with ssh's among mpirun's banners; the hosts
// reach this machine at the local address of the route to the first of them (a connected UDP
// socket's; nothing is sent). Launch() runs the mpirun command of launcher/mpirun/mpi_command.h with
// `hvdrun-agent --mpi-rank` as each rank's program (agent/mpi_rank.h), which applies the job's
// network rule for its own host (hvdrun cannot see other hosts' interfaces under mpirun). When
// every host is this machine the agent is the one beside hvdrun; with other hosts every host runs
// --agent-path.
//
// mpirun's `--tag-output` lines are cut into lines per rank and stream and reported as the agents'
// output is; mpirun's own lines go to stderr, except the banners that restate hvdrun's failure
// report (launcher/mpirun/mpirun_banner_filter.h). The ranks' starts and ends are their agents' records in
// the job's key-value store (common/process/rank_exit_record.h), read once mpirun has exited: a rank
// whose agent left no exit record is lost. When mpirun was killed (a second SIGINT, or by someone else),
// hvdrun SIGKILLs the process group of each started rank on this machine that has no exit record a little
// later; on other hosts, Open MPI's daemon loses mpirun and the rank's agent then kills its rank.
//
// mpirun runs in its own process group, with stdin from /dev/null and PR_SET_PDEATHSIG SIGTERM, so
// that a SIGKILLed hvdrun still stops it. Stop() sends it SIGTERM, which stops every rank (Open MPI
// 4.1: SIGTERM to each rank's process group after a second, SIGKILL a second later);
// StopMode::kNow SIGKILLs it, and its agents then SIGKILL their ranks at once.
#ifndef HVDRUN_LAUNCHER_MPIRUN_MPIRUN_LAUNCHER_H_
#define HVDRUN_LAUNCHER_MPIRUN_MPIRUN_LAUNCHER_H_

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/process/file_descriptor.h"
#include "common/process/line_splitter.h"
#include "common/process/process_spawner.h"
#include "common/process/wait_status.h"
#include "launcher/launch_options.h"
#include "launcher/mpirun/mpi_command.h"
#include "launcher/mpirun/mpirun_banner_filter.h"
#include "launcher/mpirun/mpirun_output_parser.h"
#include "launcher/rank_launcher.h"

namespace hvdrun {

// --dry-run: prints the mpirun command `options` would run, starting nothing; returns hvdrun's exit
// code (kExitUsage for a job mpirun cannot run).
int PrintMpirunCommand(const LaunchOptions& options, const std::string& local_agent_path);

class MpirunLauncher : public RankLauncher {
 public:
  // `local_agent_path`: the hvdrun-agent that mpirun starts for each rank when every host is this
  // machine (with other hosts: options.remote_agent_path).
  MpirunLauncher(const LaunchOptions& options, std::string local_agent_path);
  ~MpirunLauncher() override;

  void Reach(const RankAssignment& assignment, RankEvents* events) override;
  bool Reached() const override { return true; }
  const ReachedHost& host(int host_index) const override { return hosts_.at(host_index); }
  LocalAddress LocalAddressTowardHosts() const override { return local_address_; }
  Status Launch(const JobLaunch& launch) override;
  void AddPollFds(std::vector<pollfd>& fds) override;
  int PollTimeoutMs() const override;
  void Service(const pollfd* fds, size_t count) override;
  void ChildExited() override;
  void Stop(StopMode mode) override;
  bool Done() const override;
  void ShutDown() override;
  Ending Finish(const Verdict& verdict) override;

 private:
  using Clock = std::chrono::steady_clock;

  struct Stream {
    UniqueFd fd;
    MpirunOutputParser parser;
  };

  Status StartMpirun(const MpiCommand& command);
  // Reads what `stream` holds now; at its end, passes on what the parser still holds.
  void ReadStream(Stream& stream);
  void RouteTagged(int rank, protocol::OutputStream stream, std::string_view bytes);
  void PrintMpirunLines(const std::vector<std::string>& lines);
  MpirunOutputParser::Sink OutputSink();
  void FinishOutput();
  // SIGKILL to the process group of every rank on this machine that started and has no exit record.
  void KillUnfinishedRanks();
  // Reports every rank's end from the agents' records, then the ranks without one as lost.
  void ReportRecords();
  std::string MpirunEnd() const;
  void Verbose(const std::string& line) const;

  const MpirunSettings settings_;
  const std::string remote_agent_path_;  // --agent-path (or hvdrun-agent): the agent on other hosts
  const bool verbose_;
  std::string agent_path_;
  RankEvents* events_ = nullptr;
  RankAssignment assignment_;
  std::vector<ReachedHost> hosts_;
  LocalAddress local_address_;
  RendezvousServer* rendezvous_ = nullptr;  // not owned; valid from Launch() on

  MpirunBannerFilter banners_;
  std::map<std::pair<int, protocol::OutputStream>, LineSplitter> lines_;
  Stream out_;
  Stream err_;
  std::vector<Stream*> polled_;  // the stream of each descriptor AddPollFds added, in order

  ChildProcess mpirun_;  // leads its own process group
  bool mpirun_reaped_ = false;
  ExitStatus mpirun_end_;  // once reaped
  Clock::time_point drain_deadline_;
  bool stop_sent_ = false;
  bool killed_ranks_ = false;  // hvdrun SIGKILLed every started rank's group
  bool any_record_ = false;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_MPIRUN_MPIRUN_LAUNCHER_H_
