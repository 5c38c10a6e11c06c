#include "launcher/results/job_problem.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace hvdrun {
namespace {

using std::chrono::seconds;

std::vector<RankOutcome> TwoRanks() {
  std::vector<RankOutcome> ranks(2);
  for (int rank = 0; rank < 2; ++rank) {
    ranks[rank].rank = rank;
    ranks[rank].host = rank == 0 ? "a" : "b";
    ranks[rank].pid = 4240 + rank;
  }
  ranks[0].exited = true;
  ranks[0].exit.exit_code = 1;
  ranks[1].exited = true;
  ranks[1].exit.signal = SIGKILL;
  ranks[1].stopped_by_hvdrun = true;
  return ranks;
}

StallFinding Rank0WaitsForRank1(bool rank1_alive, seconds waited) {
  StallFinding finding;
  finding.tensors = {"grad.fc"};
  finding.missing_ranks = {1};
  finding.waiting_ranks = {0};
  finding.cause_rank = 1;
  finding.cause_alive = rank1_alive;
  finding.cause_state = rank1_alive ? "busy in user code for 3 s (running, has not submitted 'grad.fc')j"
                                    : "stopped by SIGSTOP 61 s ago; last completed 'grad.conv' (812 done)";
  finding.stalled_for = waited;
  return finding;
}

TEST(JobProblem, AFailureWhileWaitingForAStoppedRankBlamesTheStoppedRank) {
  std::optional<JobProblem> problem =
      FailureProblem(TwoRanks(), 0, Rank0WaitsForRank1(false, seconds(2)), seconds(60));
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->kind, "stall");
  EXPECT_EQ(problem->rank, 1);
  EXPECT_EQ(problem->waiting, std::vector<int>{0});
  EXPECT_EQ(problem->tensors, std::vector<std::string>{"grad.fc"});
  EXPECT_EQ(JobProblemToJson(*problem).dump(),
            R"j({"ended_by_stall_shutdown":false,"kind":"stall","rank":1,"stalled_seconds":2.0,)j"
            R"j("state":"stopped by SIGSTOP 61 s ago; last completed 'grad.conv' (812 done)",)j"
            R"j("tensors":["grad.fc"],"waiting_ranks":[0]})j");
}

TEST(JobProblem, AWorkingRankIsBlamedOnlyAfterTheCheckTime) {
  EXPECT_EQ(FailureProblem(TwoRanks(), 0, Rank0WaitsForRank1(true, seconds(3)), seconds(60))->rank, 0);
  EXPECT_EQ(FailureProblem(TwoRanks(), 0, Rank0WaitsForRank1(true, seconds(3)), seconds(60))->kind,
            "rank died");
  EXPECT_EQ(FailureProblem(TwoRanks(), 0, Rank0WaitsForRank1(true, seconds(60)), seconds(60))->rank, 1);
}

TEST(JobProblem, ARankThatDiesOnItsOwnIsBlamedWithWhatTheOthersWaitedFor) {
  StallFinding waits = Rank0WaitsForRank1(true, seconds(1));
  std::optional<JobProblem> problem = FailureProblem(TwoRanks(), 1, waits, seconds(60));
  EXPECT_EQ(problem->kind, "rank died");
  EXPECT_EQ(problem->rank, 1);
  EXPECT_EQ(problem->state, "killed by SIGKILL");
  EXPECT_EQ(problem->waiting, std::vector<int>{0});
  EXPECT_FALSE(FailureProblem(TwoRanks(), -1, waits, seconds(60)).has_value());
  EXPECT_EQ(FailureProblem(TwoRanks(), 0, std::nullopt, seconds(60))->state, "exit code 1");
}

TEST(JobProblem, TheFailureReportNamesTheStalledRankAndTheRankThatWaited) {
  std::FILE* null = std::fopen("/dev/null", "w");
  OutputRouter output(null, null);
  std::vector<RankOutcome> ranks = TwoRanks();
  ranks[1].exit.signal = SIGTERM;
  JobProblem problem = *FailureProblem(ranks, 0, Rank0WaitsForRank1(false, seconds(60)), seconds(60));
  EXPECT_EQ(FormatFailureReport(ranks, 0, output, &problem),
            "hvdrun: rank 1 on host b stopped progressing (stopped by SIGSTOP 61 s ago; last completed "
            "'grad.conv' (812 done)); rank 0 failed first, waiting for it (exit code 1); hvdrun stopped the "
            "other ranks.\n"
            "  RANK  HOST              PID      STATUS      NOTE              LAST STDERR LINE\n"
            "  0     a                 4240     exit 1      waiting for rank 1\n"
            "  1     b                 4241     SIGTERM     stalled (cause)\n");
  JobProblem ended = StallShutdownProblem(Rank0WaitsForRank1(false, seconds(5)));
  ranks[0].exit.exit_code = 0;
  ranks[0].exit.signal = SIGTERM;
  ranks[0].stopped_by_hvdrun = true;
  testing::internal::CaptureStderr();
  EXPECT_EQ(ReportJobEnd(ranks, -1, 0, output, &ended), 6);
  EXPECT_EQ(
      testing::internal::GetCapturedStderr(),
      "hvdrun: the job stalled for 5 s and hvdrun ended it (--stall-check-shutdown-time-seconds): rank 1 on "
      "host b stopped progressing (stopped by SIGSTOP 61 s ago; last completed 'grad.conv' (812 done)); "
      "rank 0 waited for it; hvdrun stopped the other ranks.\n"
      "  RANK  HOST              PID      STATUS      NOTE              LAST STDERR LINE\n"
      "  0     a                 4240     SIGTERM     waiting for rank 1\n"
      "  1     b                 4241     SIGTERM     stalled (cause)\n");
  std::fclose(null);
}

}  // namespace
}  // namespace hvdrun
