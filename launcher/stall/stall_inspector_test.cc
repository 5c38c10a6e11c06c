#include "launcher/stall/stall_inspector.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace hvdrun {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const StallClock::time_point kStart{};

RankState Running(int rank, uint64_t completed, std::vector<std::string> pending = {}) {
  RankState state;
  state.rank = rank;
  state.host = rank == 0 ? "a" : "b";
  state.pid = 4240 + rank;
  state.reported = true;
  state.process = RankProcess::kRunning;
  state.completed = completed;
  state.last_completed = completed > 0 ? "grad.layer4.1.conv2" : "";
  for (std::string& name : pending) state.pending.push_back({std::move(name), "allreduce", 4 << 20});
  return state;
}

StallInspector Inspector(int check_s, int shutdown_s = 0, int ranks = 2) {
  return StallInspector(
      {.enabled = true, .check_time = seconds(check_s), .shutdown_time = seconds(shutdown_s)}, ranks, kStart);
}

TEST(StallInspector, NamesAStoppedRankThatHasNotSubmittedWhatTheOthersWaitFor) {
  StallInspector inspector = Inspector(60);
  inspector.Update(Running(0, 812), kStart + seconds(1));
  inspector.Update(Running(1, 812), kStart + seconds(1));
  RankState waiting = Running(0, 812, {"grad.fc"});
  RankState stopped = Running(1, 812);
  stopped.process = RankProcess::kStopped;
  stopped.stop_signal = SIGSTOP;
  stopped.state_age = seconds(1);  // as reported at 2 s: 61 s at the check
  inspector.Update(waiting, kStart + seconds(2));
  inspector.Update(stopped, kStart + seconds(2));
  EXPECT_FALSE(inspector.Check(kStart + seconds(60)).warn);
  EXPECT_FALSE(inspector.finding().has_value());
  StallInspector::Action action = inspector.Check(kStart + seconds(62));
  EXPECT_TRUE(action.warn);
  EXPECT_FALSE(action.shut_down);
  const StallFinding& finding = *inspector.finding();
  EXPECT_EQ(finding.kind, StallKind::kMissingRanks);
  EXPECT_EQ(finding.tensors, std::vector<std::string>{"grad.fc"});
  EXPECT_EQ(finding.missing_ranks, std::vector<int>{1});
  EXPECT_EQ(finding.waiting_ranks, std::vector<int>{0});
  EXPECT_EQ(finding.cause_rank, 1);
  EXPECT_EQ(finding.stalled_for, seconds(61));
  EXPECT_EQ(
      FormatStallWarning(finding, inspector.settings()),
      "hvdrun: stall: no collective completed for 61 s; 1 tensor was submitted by some ranks and not "
      "others: 'grad.fc'\n"
      "  waiting: rank 0\n"
      "  missing rank 1:\n"
      "    rank 1 (host b, pid 4241): stopped by SIGSTOP 61 s ago; last completed 'grad.layer4.1.conv2' "
      "(812 done)\n");
}

TEST(StallInspector, WarnsOncePerCheckTimeAndShutsDownOnceAtTheShutdownTime) {
  StallInspector inspector = Inspector(2, 5);
  inspector.Update(Running(0, 3, {"x"}), kStart);
  inspector.Update(Running(1, 3), kStart);
  int shutdowns = 0;
  std::vector<int> warned_at;
  for (int ms = 0; ms <= 9000; ms += 250) {
    StallInspector::Action action = inspector.Check(kStart + milliseconds(ms));
    if (action.warn) warned_at.push_back(ms);
    shutdowns += action.shut_down;
    if (action.shut_down) {
      EXPECT_EQ(ms, 5000);
    }
  }
  EXPECT_EQ(warned_at, (std::vector<int>{2000, 4000, 6000, 8000}));
  EXPECT_EQ(shutdowns, 1);
  EXPECT_NE(FormatStallWarning(*inspector.finding(), inspector.settings())
                .find("  the job ends when stalled for 5 s (--stall-check-shutdown-time-seconds)\n"),
            std::string::npos);
}

TEST(StallInspector, ABusyRankIsNamedAsNotSubmittingAndProgressEndsTheStall) {
  StallInspector inspector = Inspector(10);
  RankState busy = Running(0, 5);
  busy.state_age = seconds(65);
  inspector.Update(busy, kStart);
  inspector.Update(Running(1, 5, {"allreduce.noname.1"}), kStart);
  ASSERT_TRUE(inspector.Check(kStart + seconds(10)).warn);
  EXPECT_EQ(inspector.finding()->rank_lines,
            std::vector<std::string>{
                "rank 0 (host a, pid 4240): busy in user code for 75 s (running, has not "
                "submitted 'allreduce.noname.1'); last completed 'grad.layer4.1.conv2' (5 done)"});
  EXPECT_EQ(inspector.finding()->cause_rank, 0);
  // Rank 0 submits; both complete: no stall, and the next one is warned of after a full check time.
  inspector.Update(Running(0, 6), kStart + seconds(11));
  inspector.Update(Running(1, 6), kStart + seconds(11));
  EXPECT_FALSE(inspector.Check(kStart + seconds(12)).warn);
  EXPECT_FALSE(inspector.finding().has_value());
  ASSERT_TRUE(inspector.last_warned().has_value());
  EXPECT_EQ(inspector.last_warned()->cause_rank, 0);
  inspector.Update(Running(1, 6, {"y"}), kStart + seconds(12));
  EXPECT_FALSE(inspector.Check(kStart + seconds(20)).warn);
  EXPECT_TRUE(inspector.Check(kStart + seconds(21)).warn);
}

TEST(StallInspector, RanksThatAllWorkInUserCodeAreNotAStall) {
  StallInspector inspector = Inspector(1);
  inspector.Update(Running(0, 5), kStart);
  inspector.Update(Running(1, 5), kStart);
  EXPECT_FALSE(inspector.Check(kStart + seconds(600)).warn);
}

TEST(StallInspector, ARankThatSkipsATensorIsNamedWithTheTensor) {
  StallInspector inspector = Inspector(1, 0, 3);
  inspector.Update(Running(0, 9, {"b"}), kStart);
  inspector.Update(Running(1, 9, {"a", "b"}), kStart);
  inspector.Update(Running(2, 9, {"a", "b"}), kStart);
  ASSERT_TRUE(inspector.Check(kStart + seconds(1)).warn);
  const StallFinding& finding = *inspector.finding();
  EXPECT_EQ(finding.tensors, std::vector<std::string>{"a"});
  EXPECT_EQ(finding.missing_ranks, std::vector<int>{0});
  EXPECT_EQ(finding.waiting_ranks, (std::vector<int>{1, 2}));
  EXPECT_EQ(
      finding.rank_lines.front(),
      "rank 0 (host a, pid 4240): waiting in allreduce 'b' (4 MiB) for 1 s (has not submitted 'a'); last "
      "completed 'grad.layer4.1.conv2' (9 done)");
}

TEST(StallInspector, ARankThatSkippedATensorIsMissingAndTheOthersWaitForIt) {
  // Rank 1 skipped 'a' and waits in 'b'; ranks 0, 2 and 3 wait in 'a' and have not reached 'b'.
  StallInspector inspector = Inspector(1, 0, 4);
  for (int rank = 0; rank < 4; ++rank) inspector.Update(Running(rank, 1, {rank == 1 ? "b" : "a"}), kStart);
  ASSERT_TRUE(inspector.Check(kStart + seconds(1)).warn);
  const StallFinding& finding = *inspector.finding();
  EXPECT_EQ(finding.tensors, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(finding.missing_ranks, std::vector<int>{1});
  EXPECT_EQ(finding.waiting_ranks, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(finding.cause_rank, 1);
  EXPECT_EQ(
      finding.rank_lines.front(),
      "rank 1 (host b, pid 4241): waiting in allreduce 'b' (4 MiB) for 1 s (has not submitted 'a'); last "
      "completed 'grad.layer4.1.conv2' (1 done)");
}

TEST(StallInspector, AnEvenSplitNamesBothSides) {
  StallInspector inspector = Inspector(1);
  inspector.Update(Running(0, 1, {"a"}), kStart);
  inspector.Update(Running(1, 1, {"b"}), kStart);
  ASSERT_TRUE(inspector.Check(kStart + seconds(1)).warn);
  EXPECT_EQ(inspector.finding()->missing_ranks, (std::vector<int>{0, 1}));
  EXPECT_TRUE(inspector.finding()->waiting_ranks.empty());
}

TEST(StallInspector, ACollectiveEveryRankSubmittedIsStuckInTheBackend) {
  StallInspector inspector = Inspector(1);
  for (int rank = 0; rank < 2; ++rank) {
    RankState inside = Running(rank, 7);
    inside.in_backend = true;
    inside.backend = {"grad.big", "allreduce", 4 << 20};
    inside.state_age = seconds(68);
    inspector.Update(inside, kStart);
  }
  ASSERT_TRUE(inspector.Check(kStart + seconds(2)).warn);
  const StallFinding& finding = *inspector.finding();
  EXPECT_EQ(finding.kind, StallKind::kStuckInBackend);
  EXPECT_EQ(finding.tensors, std::vector<std::string>{"grad.big"});
  EXPECT_EQ(finding.cause_rank, -1);
  EXPECT_EQ(finding.rank_lines.front(),
            "rank 0 (host a, pid 4240): inside the backend in allreduce 'grad.big' (4 MiB) for 70 s; last "
            "completed "
            "'grad.layer4.1.conv2' (7 done)");
  EXPECT_EQ(FormatStallWarning(finding, inspector.settings()).substr(0, 122),
            "hvdrun: stall: no collective completed for 2 s; every rank submitted 'grad.big', which has not "
            "finished "
            "inside the backend");
}

TEST(StallInspector, ASilentRankIsMissingAndBlamed) {
  StallInspector inspector = Inspector(1);
  RankState started;
  started.host = "a";
  started.pid = 4240;
  inspector.Update(started, kStart);
  inspector.Update(Running(1, 0, {"x"}), kStart);
  ASSERT_TRUE(inspector.Check(kStart + seconds(1)).warn);
  EXPECT_EQ(inspector.finding()->rank_lines,
            std::vector<std::string>{"rank 0 (host a, pid 4240): no progress report yet"});
  EXPECT_EQ(inspector.finding()->cause_rank, 0);
}

TEST(StallInspector, DisabledSaysNothingAndAShutdownBelowTheCheckTimeIsIgnored) {
  StallInspector off({.enabled = false}, 2, kStart);
  off.Update(Running(0, 0, {"x"}), kStart);
  EXPECT_FALSE(off.Check(kStart + seconds(3600)).warn);
  StallInspector short_shutdown = Inspector(10, 5);
  EXPECT_EQ(short_shutdown.ShutdownIgnoredNote(),
            "--stall-check-shutdown-time-seconds 5 is below the stall check time (10 s): no stall shutdown");
  short_shutdown.Update(Running(0, 0, {"x"}), kStart);
  EXPECT_FALSE(short_shutdown.Check(kStart + seconds(100)).shut_down);
}

TEST(RankState, FromAnAgentsReport) {
  protocol::RankProgress progress;
  progress.rank = 1;
  progress.pid = 4242;
  progress.state = protocol::ProcessState::kStopped;
  progress.stop_signal = SIGSTOP;
  progress.state_since_unix_ms = 1'000'000;
  progress.board_read = true;
  progress.completed = 812;
  progress.last_completed_name = "grad.layer4.1.conv2";
  progress.pending = 1;
  progress.oldest_pending_name = "grad.fc";
  progress.oldest_pending_since_unix_ms = 990'000;
  protocol::FlightRecord later;
  later.sequence = 814;
  later.name = "grad.bias";
  later.op = "allreduce";
  later.phase = protocol::CollectivePhase::kSubmitted;
  progress.records = {later};
  RankState state = RankStateFromProgress(progress, 1'061'000);
  EXPECT_TRUE(state.reported);
  EXPECT_EQ(state.process, RankProcess::kStopped);
  EXPECT_EQ(state.state_age, seconds(61));  // stopped since 1'000 s, not waiting since 990 s
  ASSERT_EQ(state.pending.size(), 2u);
  EXPECT_EQ(state.pending[0].name, "grad.fc");
  EXPECT_EQ(state.pending[1].name, "grad.bias");
  EXPECT_EQ(state.recorder.size(), 1u);
  state.host = "b";
  EXPECT_EQ(RankLabel(state) + ": " + DescribeRankState(state, ""),
            "rank 1 (host b, pid 4242): stopped by SIGSTOP 61 s ago; last completed 'grad.layer4.1.conv2' "
            "(812 done)");
  progress.state = protocol::ProcessState::kSleeping;
  progress.pending = 0;
  progress.records.clear();
  progress.last_completed_unix_ms = 986'000;
  EXPECT_EQ(DescribeRankState(RankStateFromProgress(progress, 1'061'000), "x"),
            "busy in user code for 75 s (running, has not submitted 'x'); last completed "
            "'grad.layer4.1.conv2' (812 "
            "done)");
}

TEST(RankState, SizeText) {
  EXPECT_EQ(SizeText(512), "512 B");
  EXPECT_EQ(SizeText(1536), "1.5 KiB");
  EXPECT_EQ(SizeText(4 << 20), "4 MiB");
}

TEST(StallSettings, FlagsOverHvdrunsEnvironmentOverDefaults) {
  auto none = [](const char*) -> const char* { return nullptr; };
  StallSettings defaults = ReadStallSettings({}, none);
  EXPECT_TRUE(defaults.enabled);
  EXPECT_EQ(defaults.check_time, seconds(60));
  EXPECT_EQ(defaults.shutdown_time, seconds(0));
  auto own = [](const char* name) -> const char* {
    if (std::string(name) == "HOROVOD_STALL_CHECK_TIME_SECONDS") return "30";
    if (std::string(name) == "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS") return "soon";
    return nullptr;
  };
  StallSettings read =
      ReadStallSettings({"HOROVOD_STALL_CHECK_TIME_SECONDS_X=9", "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS=120",
                         "HOROVOD_STALL_CHECK_DISABLE=0", "HOROVOD_STALL_CHECK_DISABLE=1"},
                        own);
  EXPECT_FALSE(read.enabled);
  EXPECT_EQ(read.check_time, seconds(30));
  EXPECT_EQ(read.shutdown_time, seconds(120));
}

}  // namespace
}  // namespace hvdrun
