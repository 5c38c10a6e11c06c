// What happened to each rank, and the report hvdrun prints when a job fails.
#ifndef HVDRUN_LAUNCHER_RESULTS_FAILURE_REPORT_H_
#define HVDRUN_LAUNCHER_RESULTS_FAILURE_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/process/wait_status.h"  // SignalName, for the report and its callers
#include "common/protocol/agent_protocol.h"
#include "launcher/output_router.h"

namespace hvdrun {

struct JobProblem;  // launcher/results/job_problem.h

struct RankOutcome {
  int rank = 0;
  std::string host;
  int pid = 0;  // 0 until the agent reports the rank started
  bool exited = false;
  protocol::RankExited exit;       // valid when exited
  bool stopped_by_hvdrun = false;  // it ended by the signals of hvdrun's stop of the job
  std::string lost_reason;         // set when the rank's agent vanished before reporting its end
  bool stop_requested = false;     // it had been told to stop before it ended or was lost
  uint64_t end_unix_ns = 0;        // when it ended, by its host's clock; 0 when unknown
  int heard = -1;                  // the order in which its end (or loss) reached hvdrun; -1 before
  // The launcher's index of its process (OutputRouter's key), where it is not `rank`: an elastic
  // job's ranks are those of its last round; -1: `rank`.
  int process = -1;

  bool Failed() const {
    return !lost_reason.empty() || (exited && (exit.exit_code != 0 || exit.signal != 0));
  }
};

// The job's first failure, a rank, or -1 for none: among the ranks that failed before anything
// told them to stop, the one that ended first (by end_unix_ns where both are known, else by the
// order hvdrun heard of them); without such a rank and without an interrupt (`interrupted`), the
// earliest failure that hvdrun's stop did not cause.
int ChooseFirstFailure(const std::vector<RankOutcome>& ranks, bool interrupted);

// How the rank ended, in words: "exit code 7", "killed by SIGSEGV", or the reason it was lost.
std::string EndText(const RankOutcome& outcome);

// The exit code hvdrun uses for a failed rank: its own code, or 128+N for signal N.
int ExitCodeOf(const RankOutcome& outcome);

// The multi-line report for a failed job: a headline naming the first failure, a table of every
// rank (rank, host, pid, status, note, last stderr line), and the first failure's last stderr lines.
// With a `problem` (nullptr: none) that blames another rank than the first failure, or a stall
// hvdrun ended (first_failure may then be -1), the headline names that rank and its state, its note
// is "stalled (cause)", and the ranks that waited for it (the first failure among them) read
// "waiting for rank N".
std::string FormatFailureReport(const std::vector<RankOutcome>& ranks, int first_failure,
                                const OutputRouter& output, const JobProblem* problem = nullptr);

// How a job whose ranks were started ends, printed on stderr, and hvdrun's exit code for it:
// the first failure (`first_failure`, a rank, or -1 for none) as one line when that rank could not
// start (126, 127, or 3 when its host could not fork it) or as the failure report; without one,
// the signal that stopped hvdrun (`interrupt_signal`, 0 for none; 128+N); else 0. A `problem` that
// hvdrun's stall shutdown ended is reported first, as the failure report, with kExitStall.
int ReportJobEnd(const std::vector<RankOutcome>& ranks, int first_failure, int interrupt_signal,
                 const OutputRouter& output, const JobProblem* problem = nullptr);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_RESULTS_FAILURE_REPORT_H_
