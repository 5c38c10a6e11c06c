// OutputRouter: where the ranks' output lines go in the launcher.
//
// Output arrives by process: RankOutput::rank is the launcher's index of the process that wrote it
// (its rank, in a job that is not elastic). Every line is printed tagged, horovodrun's way:
// `[3]<stdout>:text` on hvdrun's stdout and `[3]<stderr>:text` on its stderr, 3 being the rank the
// process is shown as (ShowAs(); its index until then); with StampLines, each first stamped with the
// local time as horovodrun's -prefix-timestamp stamps it (`Sat Nov  1 09:02:11 2025[3]<stdout>:text`).
// With an output directory, each process's bytes are also written, exactly as it wrote them, to
// the stdout and stderr files of its own directory: DIR/rank.N/ for the launch's ranks (N padded
// as horovodrun pads it), the directory AddRankFiles() names for a process started later. The last
// few stderr lines of each process are kept for the failure report. Console output is buffered and
// written by Flush(), which the launcher calls once per event-loop round. Not thread-safe.
#ifndef HVDRUN_LAUNCHER_OUTPUT_ROUTER_H_
#define HVDRUN_LAUNCHER_OUTPUT_ROUTER_H_

#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/protocol/agent_protocol.h"
#include "hvdrun/status.h"

namespace hvdrun {

// "rank.07": the directory of `rank`'s files in a job of `num_ranks`, the number padded with zeros to
// the width of the largest rank's (horovodrun's _pad_rank), so that the names sort in rank order.
std::string RankDirName(int rank, int num_ranks);

// The directory, under --output-filename's, of the process that took rank `rank` of an elastic
// job's round `round` of `round_size` ranks when it started: RankDirName's for round 0 (the launch),
// "round.<round>/rank.<rank>" (padded the same way, to the round's size) for a later round.
std::string RoundRankDirName(int round, int rank, int round_size);

class OutputRouter {
 public:
  // Lines of stderr kept per rank for the failure report.
  static constexpr size_t kStderrTailLines = 5;

  // `out` and `err` receive the tagged lines (normally stdout and stderr); not owned.
  OutputRouter(std::FILE* out, std::FILE* err) : out_(out), err_(err) {}

  // Creates DIR/rank.N/ for every rank of the job (processes 0 to num_ranks - 1). Fails naming the
  // directory that cannot be made.
  Status OpenRankFiles(const std::string& dir, int num_ranks);
  // Creates `rank_dir` (and its parents) for process `process` started later, and writes its output
  // there from now on. Fails naming the directory or file that cannot be made.
  Status AddRankFiles(int process, const std::string& rank_dir);
  // Lines of process `process` are tagged with `rank` from now on.
  void ShowAs(int process, int rank) { shown_as_[process] = rank; }
  // Console lines from now on start with the local time (asctime's form).
  void StampLines(bool stamp) { stamp_lines_ = stamp; }

  void Write(const protocol::RankOutput& output);
  void Flush();

  // The last kStderrTailLines complete stderr lines of process `process`, oldest first.
  std::vector<std::string> StderrTail(int process) const;

 private:
  struct RankFiles {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> out{nullptr, &std::fclose};
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> err{nullptr, &std::fclose};
  };

  std::FILE* out_;
  std::FILE* err_;
  bool stamp_lines_ = false;
  std::map<int, RankFiles> files_;  // by process
  std::map<int, int> shown_as_;     // process -> the rank its lines show, where it is not its index
  std::map<int, std::deque<std::string>> stderr_tail_;
  std::map<int, std::string> stderr_partial_;  // pieces of a long stderr line not yet complete
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_OUTPUT_ROUTER_H_
