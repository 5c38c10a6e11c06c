#include "tests/e2e/failure_report.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstddef>
#include <fstream>

#include "tests/e2e/console_output.h"
#include "tests/e2e/rank_record.h"

namespace hvdrun::e2e {

FailureReport ParseFailureReport(const std::string& console_stderr) {
  FailureReport report;
  std::vector<std::string> lines = UntaggedLines(console_stderr);
  size_t i = 0;
  while (i < lines.size() && !Contains(lines[i], "failed first")) ++i;
  if (i == lines.size()) return report;
  report.first_line = lines[i++];
  if (i < lines.size()) report.table_header = lines[i++];
  for (; i < lines.size() && lines[i].starts_with("  ") && lines[i].size() > 2 &&
         std::isdigit(static_cast<unsigned char>(lines[i][2]));
       ++i) {
    report.rows[std::stoi(lines[i].substr(2))] = lines[i];
  }
  report.tail_header_and_lines.assign(lines.begin() + static_cast<std::ptrdiff_t>(i), lines.end());
  return report;
}

StoppedJob LetRanksGoAndWait(RunningProcess& hvdrun, const std::string& dir,
                             std::chrono::milliseconds timeout) {
  const auto let_go = std::chrono::steady_clock::now();
  std::ofstream(GoFilePath(dir)).flush();
  StoppedJob stopped{hvdrun.Wait(timeout), {}};
  stopped.stopped_in =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - let_go);
  return stopped;
}

void ExpectKilledAfterIgnoringSigterm(const FailureReport& report, int first, int last,
                                      const ProcessResult& result) {
  for (int rank = first; rank <= last; ++rank) {
    const auto row = report.rows.find(rank);
    const std::string text = row == report.rows.end() ? "" : row->second;
    EXPECT_TRUE(Contains(text, "SIGKILL")) << "rank " << rank << " ignored SIGTERM" << result;
    EXPECT_TRUE(Contains(text, "stopped by hvdrun")) << "rank " << rank << result;
  }
}

}  // namespace hvdrun::e2e
