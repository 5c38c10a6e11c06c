// MpiJob: one run of a command under Open MPI's mpirun (`hvdrun --mpi`), from starting the
// rendezvous service to the exit code.
//
// Run() places the ranks as agent mode does (refusing what mpirun cannot run: CheckMpiHosts),
// starts the job's rendezvous service, and runs the mpirun command of launcher/mpi_command.h, with
// `hvdrun-agent --mpi-rank` as each rank's program (agent/mpi_rank.h); --dry-run prints that
// command instead and starts nothing. When every host is this machine the service listens on
// loopback and the agent is the one beside hvdrun; with other hosts, every host's name is resolved
// first (a failure is hvdrun's one line), the service listens on the local address of the route
// to the first other host (a connected UDP socket's; nothing is sent), which is also
// MASTER_ADDR when rank 0 runs here, and every host runs --agent-path. mpirun's
// `--tag-output` lines are cut into lines per rank and stream and routed as agent mode routes the
// agents' (OutputRouter: console, --output-filename files, stderr tails); mpirun's own lines go to
// stderr, except the banners that restate hvdrun's failure report (launcher/mpirun_banner_filter.h).
// When mpirun has exited, every rank's records (common/rank_exit_record.h) are read from the
// service, and the job ends as agent mode's does: the same failure report and exit code, and the
// same summary of the ranks' reports and results directory.
//
// The first failure is the failing rank that ended first (by its agent's clock) without having
// been told to stop; ranks ended by the stop's signal (SIGTERM, SIGINT, SIGHUP or SIGKILL) are
// "stopped by hvdrun". A rank whose agent left no exit record is lost. When mpirun was killed (a
// second SIGINT, or by someone else), hvdrun SIGKILLs the process group of each started rank on
// this machine that has no exit record a little later, as agent mode does for the ranks of a lost
// local agent; on other hosts, Open MPI's daemon loses mpirun and its agents then kill their ranks.
//
// mpirun runs in its own process group, with stdin from /dev/null and PR_SET_PDEATHSIG SIGTERM, so
// that a SIGKILLed hvdrun still stops it. SIGINT, SIGTERM or SIGHUP to hvdrun sends SIGTERM to
// mpirun, which stops every rank (Open MPI 4.1: SIGTERM to each rank's process group after a
// second, SIGKILL a second later); a second SIGINT SIGKILLs mpirun, whose agents then SIGKILL
// their ranks at once. Run() takes over SIGINT, SIGTERM, SIGHUP, SIGCHLD and SIGPIPE while it
// runs; one job runs at a time.
#ifndef HVDRUN_LAUNCHER_MPI_JOB_H_
#define HVDRUN_LAUNCHER_MPI_JOB_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/file_descriptor.h"
#include "common/line_splitter.h"
#include "common/rank_assignment.h"
#include "launcher/failure_report.h"
#include "launcher/launch_options.h"
#include "launcher/mpi_command.h"
#include "launcher/mpirun_banner_filter.h"
#include "launcher/mpirun_output_parser.h"
#include "launcher/output_router.h"
#include "launcher/rendezvous_server.h"

namespace hvdrun {

class MpiJob {
 public:
  // `agent_path`: the hvdrun-agent that mpirun starts for each rank when every host is this
  // machine (with other hosts: options.remote_agent_path).
  MpiJob(LaunchOptions options, std::string agent_path);

  // Returns hvdrun's exit code (common/exit_codes.h, or the first failing rank's code).
  int Run();

 private:
  using Clock = std::chrono::steady_clock;

  struct Stream {
    UniqueFd fd;
    MpirunOutputParser parser;
  };

  Status StartMpirun(const MpiCommand& command);
  void PollOnce();
  void HandleSignals();
  // Reads what `stream` holds now; at its end, passes on what the parser still holds.
  void ReadStream(Stream& stream);
  void RouteTagged(int rank, protocol::OutputStream stream, std::string_view bytes);
  void PrintMpirunLines(const std::vector<std::string>& lines);
  void FinishOutput();
  // SIGKILL to the process group of every rank that started and has no exit record.
  void KillUnfinishedRanks();
  // Fills outcomes_ from the ranks' records and chooses the first failure; false when no rank
  // left any record (mpirun started none).
  bool CollectRecords();
  void ChooseFirstFailure();
  int Report(bool any_record);
  std::string MpirunEnd() const;
  void Verbose(const std::string& line) const;

  LaunchOptions options_;
  std::string agent_path_;
  RankAssignment assignment_;
  std::string job_id_;
  std::string secret_;  // the job secret; never printed or stored
  std::unique_ptr<RendezvousServer> rendezvous_;
  OutputRouter output_;
  MpirunBannerFilter banners_;
  std::map<std::pair<int, protocol::OutputStream>, LineSplitter> lines_;
  UniqueFd signals_;
  Stream out_;
  Stream err_;

  pid_t mpirun_pid_ = -1;  // also its process group id
  bool mpirun_reaped_ = false;
  int mpirun_status_ = 0;  // waitpid's status, once reaped
  Clock::time_point drain_deadline_;
  int interrupt_signal_ = 0;
  bool killed_ranks_ = false;  // a second SIGINT: hvdrun SIGKILLed every started rank's group

  std::vector<RankOutcome> outcomes_;
  std::vector<uint64_t> end_unix_ns_;  // by rank, from the exit records
  std::vector<bool> stop_requested_;   // by rank, from the exit records
  int first_failure_ = -1;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_MPI_JOB_H_
