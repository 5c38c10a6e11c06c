// JobMarker: a variable that every process of one hvdrun run inherits (hvdrun, mpirun, the agents,
// the ranks and their children), so that a test can find each of them that is still running, and
// kill what a failed test left behind. Processes are found through /proc; a zombie has no
// environment any more and is not found.
#ifndef HVDRUN_TESTS_E2E_JOB_MARKER_H_
#define HVDRUN_TESTS_E2E_JOB_MARKER_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/e2e/process_runner.h"

namespace hvdrun::e2e {

class JobMarker {
 public:
  JobMarker();
  // SIGKILLs every marked process still running: nothing a failed test left behind outlives it.
  ~JobMarker();
  JobMarker(const JobMarker&) = delete;
  JobMarker& operator=(const JobMarker&) = delete;

  // Options that mark the run (added to `options`' environment).
  ProcessOptions Options(ProcessOptions options = {}) const;

  // The marked processes running now (stopped ones too).
  std::vector<pid_t> Running() const;

  // Waits until no marked process runs, for up to `timeout`; returns those still running.
  std::vector<pid_t> WaitUntilNoneRuns(std::chrono::milliseconds timeout) const;
  // A test failure naming how many marked processes still run `within` from now.
  void ExpectNoneRunsWithin(std::chrono::milliseconds within) const;

 private:
  std::string entry_;
};

}  // namespace hvdrun::e2e

#endif  // HVDRUN_TESTS_E2E_JOB_MARKER_H_
