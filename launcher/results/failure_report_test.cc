#include "launcher/results/failure_report.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>

namespace hvdrun {
namespace {

RankOutcome Exited(int rank, int code, int signal, bool stopped) {
  RankOutcome outcome;
  outcome.rank = rank;
  outcome.host = "localhost";
  outcome.pid = 100 + rank;
  outcome.exited = true;
  outcome.exit.rank = rank;
  outcome.exit.exit_code = signal != 0 ? 128 + signal : code;
  outcome.exit.signal = signal;
  outcome.stopped_by_hvdrun = stopped;
  return outcome;
}

TEST(FailureReport, ExitCodeIsTheRanksOr128PlusSignal) {
  EXPECT_EQ(ExitCodeOf(Exited(0, 7, 0, false)), 7);
  EXPECT_EQ(ExitCodeOf(Exited(0, 0, SIGSEGV, false)), 139);
}

TEST(FailureReport, TableMarksTheFirstFailureAndShowsItsStderr) {
  std::FILE* null = std::fopen("/dev/null", "w");
  OutputRouter output(null, null);
  output.Write(
      protocol::RankOutput{1, protocol::OutputStream::kStderr, true, "Traceback (most recent call last):"});
  output.Write(protocol::RankOutput{1, protocol::OutputStream::kStderr, true, "ValueError: bad batch"});
  std::vector<RankOutcome> ranks = {Exited(0, 0, SIGTERM, true), Exited(1, 7, 0, false),
                                    Exited(2, 0, 0, false)};
  std::string report = FormatFailureReport(ranks, 1, output);
  std::fclose(null);
  EXPECT_EQ(report,
            "hvdrun: rank 1 on host localhost failed first (exit code 7); hvdrun stopped the other ranks.\n"
            "  RANK  HOST              PID      STATUS      NOTE              LAST STDERR LINE\n"
            "  0     localhost         100      SIGTERM     stopped by hvdrun\n"
            "  1     localhost         101      exit 7      first failure     ValueError: bad batch\n"
            "  2     localhost         102      exit 0\n"
            "last stderr lines of rank 1:\n"
            "  Traceback (most recent call last):\n"
            "  ValueError: bad batch\n");
}

TEST(FailureReport, AnElasticRoundsRanksShowTheStderrOfTheirProcess) {
  // The last round: rank 0 is process 0, rank 1 process 3 (started in a later round).
  std::FILE* null = std::fopen("/dev/null", "w");
  OutputRouter output(null, null);
  output.Write(protocol::RankOutput{1, protocol::OutputStream::kStderr, true, "from process 1"});
  output.Write(protocol::RankOutput{3, protocol::OutputStream::kStderr, true, "from process 3"});
  RankOutcome later = Exited(1, 4, 0, false);
  later.process = 3;
  std::vector<RankOutcome> ranks = {Exited(0, 0, SIGTERM, true), later};
  std::string report = FormatFailureReport(ranks, 1, output);
  std::fclose(null);
  EXPECT_NE(report.find("  1     localhost         101      exit 4      first failure     from process 3\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("last stderr lines of rank 1:\n  from process 3\n"), std::string::npos) << report;
  EXPECT_EQ(report.find("from process 1"), std::string::npos) << report;
}

TEST(FailureReport, LostAgentAndSignal) {
  std::FILE* null = std::fopen("/dev/null", "w");
  OutputRouter output(null, null);
  RankOutcome lost;
  lost.rank = 1;
  lost.host = "127.0.0.1";
  lost.lost_reason = "agent failed: the agent exited unexpectedly";
  std::vector<RankOutcome> ranks = {Exited(0, 0, SIGSEGV, false), lost};
  std::string report = FormatFailureReport(ranks, 0, output);
  std::fclose(null);
  EXPECT_NE(report.find("rank 0 on host localhost failed first (killed by SIGSEGV)"), std::string::npos)
      << report;
  EXPECT_NE(report.find("127.0.0.1         -        lost        failed"), std::string::npos) << report;
}

TEST(FailureReport, BigJobsListFailedRanksAndCountTheRest) {
  std::FILE* null = std::fopen("/dev/null", "w");
  OutputRouter output(null, null);
  std::vector<RankOutcome> ranks;
  ranks.reserve(100);
  for (int rank = 0; rank < 100; ++rank) ranks.push_back(Exited(rank, 0, SIGTERM, true));
  ranks[77] = Exited(77, 3, 0, false);
  std::string report = FormatFailureReport(ranks, 77, output);
  std::fclose(null);
  EXPECT_NE(report.find("  77    localhost"), std::string::npos);
  EXPECT_NE(report.find("... and 68 more ranks that exited normally or were stopped"), std::string::npos)
      << report;
}

TEST(FailureReport, ManyFailedRanksAreSummarised) {
  // 30,000 ranks lost with their agent: 32 rows and a count, not 30,000 rows.
  std::FILE* null = std::fopen("/dev/null", "w");
  OutputRouter output(null, null);
  std::vector<RankOutcome> ranks(30000);
  for (int rank = 0; rank < 30000; ++rank) {
    ranks[rank].rank = rank;
    ranks[rank].host = "localhost";
    ranks[rank].lost_reason = "agent failed";
  }
  ranks.push_back(Exited(30000, 0, 0, false));
  std::string report = FormatFailureReport(ranks, 5, output);
  std::fclose(null);
  EXPECT_EQ(std::count(report.begin(), report.end(), '\n'), 2 + 32 + 2) << report;
  EXPECT_NE(report.find("  5     localhost         -        lost        first failure"), std::string::npos)
      << report;
  EXPECT_NE(report.find("... and 29968 more ranks that failed (30001 in all)\n"), std::string::npos)
      << report;
  EXPECT_NE(report.find("... and 1 more ranks that exited normally or were stopped\n"), std::string::npos)
      << report;
}

}  // namespace
}  // namespace hvdrun
