// ProgressDisplay: what `hvdrun-lab run` shows while the matrix runs.
//
// On a terminal, one status line redrawn in place — runs done of all, the run in progress and how
// long it has run, the time since the start and an estimate of what is left — with a line above it
// for each run that ends. Otherwise (a pipe, a file, a CI log) plain lines only: one when a run
// starts and one when it ends, each with the same counts and times. The estimate is the mean time
// of the runs made so far in this session (before the first: of the runs kept from earlier ones)
// times the runs left. Times are passed in, so that the display is a pure function of its calls.
// Not thread-safe.
#ifndef HVDRUN_LAB_RUN_PROGRESS_DISPLAY_H_
#define HVDRUN_LAB_RUN_PROGRESS_DISPLAY_H_

#include <chrono>
#include <optional>
#include <ostream>
#include <string>

namespace hvdrun::lab {

class ProgressDisplay {
 public:
  using Clock = std::chrono::steady_clock;

  struct Options {
    bool terminal = false;
    size_t width = 0;  // terminal: the status line is cut to width - 1 columns; 0: not cut
    int total_runs = 0;
  };

  ProgressDisplay(std::ostream& out, Options options, Clock::time_point start);

  // Runs that count as done before any is made (kept from an earlier session), with their mean duration.
  void AddKeptRuns(int runs, double mean_seconds);

  void RunStarted(const std::string& label, Clock::time_point now);
  // Redraws the status line when it changed (terminal only); cheap to call often.
  void Tick(Clock::time_point now);
  // `error` is shown for a failed run.
  void RunFinished(bool ok, const std::string& error, double seconds, Clock::time_point now);
  // A line of its own (above the status line on a terminal).
  void Message(const std::string& line);
  // Clears the status line; further output starts on a clean line.
  void Finish();

  // "1:05", "1:02:03"
  static std::string FormatDuration(double seconds);

 private:
  std::string Counts() const;
  std::string Times(Clock::time_point now) const;
  void ClearStatus();

  std::ostream& out_;
  Options options_;
  Clock::time_point start_;
  int done_ = 0;
  int failed_ = 0;
  int made_ = 0;  // runs made in this session
  double made_seconds_ = 0;
  double kept_mean_seconds_ = 0;
  std::string current_;
  Clock::time_point current_start_;
  bool status_shown_ = false;
  std::string status_;  // the status line on the terminal, when shown
};

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_RUN_PROGRESS_DISPLAY_H_
