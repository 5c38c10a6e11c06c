// The failure report hvdrun prints when a rank fails first (docs/errors.md), as the tests read it
// back, and what the agent-mode and --mpi tests of a stopped job both check.
#ifndef HVDRUN_TESTS_E2E_FAILURE_REPORT_H_
#define HVDRUN_TESTS_E2E_FAILURE_REPORT_H_

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "tests/e2e/process_runner.h"

namespace hvdrun::e2e {

// The report: its first line, the table's header and rows by rank, and what follows the table (the
// first failing rank's last stderr lines, under their own header). Empty when there is none.
struct FailureReport {
  std::string first_line;
  std::string table_header;
  std::map<int, std::string> rows;
  std::vector<std::string> tail_header_and_lines;
};

FailureReport ParseFailureReport(const std::string& console_stderr);

// How a job whose ranks wait for the go file ended once they were let go.
struct StoppedJob {
  ProcessResult result;
  std::chrono::milliseconds stopped_in;  // from the go file's creation to hvdrun's end
};

// Creates the go file in `dir` (test_rank --wait-go), which lets the ranks go on and the one told
// to fail fail, and waits up to `timeout` for hvdrun to end.
StoppedJob LetRanksGoAndWait(RunningProcess& hvdrun, const std::string& dir,
                             std::chrono::milliseconds timeout);

// Expects every rank from `first` to `last` in `report` to have been stopped by hvdrun with SIGKILL,
// as ranks that ignore SIGTERM are.
void ExpectKilledAfterIgnoringSigterm(const FailureReport& report, int first, int last,
                                      const ProcessResult& result);

}  // namespace hvdrun::e2e

#endif  // HVDRUN_TESTS_E2E_FAILURE_REPORT_H_
