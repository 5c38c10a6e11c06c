// The elastic job lifecycle through JobRun, over the fake launcher (launcher/fake_rank_launcher.h)
// and a real rendezvous service on loopback.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/exit_codes.h"
#include "launcher/fake_rank_launcher.h"
#include "launcher/job_run.h"
#include "launcher/rendezvous/rendezvous_server.h"

namespace hvdrun {
namespace {

using namespace std::chrono_literals;

// Three one-slot hosts, all this machine, Gloo, elastic with `min_np`.
LaunchOptions ElasticOptionsFor(int min_np, int timeout_s = 600) {
  LaunchOptions options;
  options.hosts = {{"127.0.0.1", 1}, {"127.0.0.2", 1}, {"127.0.0.3", 1}};
  options.num_proc = 3;
  options.command = {"train"};
  options.working_dir = "/work";
  options.backend = BackendKind::kGloo;
  options.elastic = ElasticOptions{};
  options.elastic->min_np = min_np;
  options.elastic->timeout_s = timeout_s;
  return options;
}

struct ElasticJob {
  explicit ElasticJob(LaunchOptions options)
      : fake(new FakeRankLauncher()),
        job(std::move(options), std::unique_ptr<RankLauncher>(fake), std::make_unique<FakeSignalWatch>()) {}
  int Run() {
    testing::internal::CaptureStderr();
    int code = job.Run();
    err = testing::internal::GetCapturedStderr();
    return code;
  }
  FakeRankLauncher* fake;
  JobRun job;
  std::string err;
};

FakeRankLauncher::Step Wait(std::chrono::milliseconds time) {
  return [time](FakeRankLauncher&, RankEvents&) { std::this_thread::sleep_for(time); };
}

// Copies the store's elastic keys when it runs.
FakeRankLauncher::Step ReadKeys(std::map<std::string, std::string>* keys) {
  return [keys](FakeRankLauncher& fake, RankEvents&) {
    *keys = fake.launched()->rendezvous->ValuesWithPrefix("elastic/");
  };
}

TEST(ElasticJob, AKilledRankDoesNotStopTheJobWhichEndsOnTheSurvivors) {
  ElasticJob t(ElasticOptionsFor(2));
  std::map<std::string, std::string> keys;
  t.fake->Then(FakeRankLauncher::Killed(1, SIGKILL))
      .Then(Wait(800ms))  // past the settle time: the job re-forms
      .Then(Wait(200ms))  // the service thread stores the keys
      .Then(ReadKeys(&keys))
      .Then(FakeRankLauncher::Exit(0, 0))
      .Then(FakeRankLauncher::Exit(2, 0));
  EXPECT_EQ(t.Run(), 0) << t.err;
  EXPECT_TRUE(t.fake->stops().empty());
  EXPECT_EQ(keys["elastic/round"], "1");
  EXPECT_EQ(keys["elastic/1/rank/127.0.0.1/0/0"], "0 2 0 1 0 2 127.0.0.1");
  EXPECT_EQ(keys["elastic/1/rank/127.0.0.3/0/2"], "1 2 0 1 1 2 127.0.0.3");
  EXPECT_NE(
      t.err.find("hvdrun: elastic: round 1: 2 ranks on 2 hosts; hosts lost: 127.0.0.2; added: none; why: "
                 "127.0.0.2/0/1 killed by SIGKILL; re-formed in "),
      std::string::npos)
      << t.err;
  const std::vector<std::string>& variables = t.fake->launched()->rank_variables.at(1);
  EXPECT_NE(std::find(variables.begin(), variables.end(), "HVDRUN_WORKER_ID=127.0.0.2/0/1"), variables.end());
}

TEST(ElasticJob, BelowMinNpForTheTimeoutStopsEveryRankWithItsOwnCode) {
  ElasticJob t(ElasticOptionsFor(3, 1));
  // Past the settle time (2 slots: the job waits), then past the timeout.
  t.fake->Then(FakeRankLauncher::Killed(1, SIGKILL)).Then(Wait(700ms)).Then(Wait(1200ms));
  EXPECT_EQ(t.Run(), kExitElasticFailed) << t.err;
  EXPECT_EQ(t.fake->stops(), std::vector<RankLauncher::StopMode>{RankLauncher::StopMode::kGraceful});
  EXPECT_NE(
      t.err.find("hvdrun: elastic job failed in round 0: 2 slots alive for 1 s (--elastic-timeout), fewer "
                 "than --min-np 3\nhvdrun: hosts lost: 127.0.0.2 (worker 127.0.0.2/0/1 killed by SIGKILL)\n"),
      std::string::npos)
      << t.err;
}

TEST(ElasticJob, AFailureAfterARankSucceededFailsTheJobAsWithoutElastic) {
  ElasticJob t(ElasticOptionsFor(1));
  t.fake->Then(FakeRankLauncher::Exit(0, 0)).Then(FakeRankLauncher::Exit(1, 3));
  EXPECT_EQ(t.Run(), 3) << t.err;
  EXPECT_EQ(t.fake->stops(), std::vector<RankLauncher::StopMode>{RankLauncher::StopMode::kGraceful});
}

// After a re-formation, process 2 is rank 1 of round 1: its lines, the stall check and the report
// name it so (docs/elastic.md, "Ranks across rounds").
TEST(ElasticJob, AfterAReformationTheConsoleTheStallCheckAndTheReportShowTheRoundsRanks) {
  LaunchOptions options = ElasticOptionsFor(2);
  options.exports = {"HOROVOD_STALL_CHECK_TIME_SECONDS=1", "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS=3"};
  ElasticJob t(std::move(options));
  auto now = std::make_shared<StallClock::time_point>();
  t.job.SetClockForTesting([now] { return *now; });
  RankState waits;
  waits.rank = 0;
  waits.reported = true;
  waits.process = RankProcess::kRunning;
  waits.pending.push_back({.name = "grad.fc", .op = "allreduce", .bytes = 64});
  RankState stopped;
  stopped.rank = 2;  // the process; rank 1 of round 1
  stopped.reported = true;
  stopped.process = RankProcess::kStopped;
  stopped.stop_signal = SIGSTOP;
  t.fake->Then(FakeRankLauncher::Print(2, "round 0"))
      .Then(FakeRankLauncher::Killed(1, SIGKILL))
      .Then(Wait(800ms))  // past the settle time: the job re-forms
      .Then(FakeRankLauncher::Print(2, "round 1"))
      .Then(FakeRankLauncher::Progress(waits))
      .Then(FakeRankLauncher::Progress(stopped));
  for (int i = 0; i < 12; ++i) {
    t.fake->Then([now](FakeRankLauncher&, RankEvents&) { *now += 250ms; });
  }
  EXPECT_EQ(t.Run(), kExitStall) << t.err;
  EXPECT_NE(t.err.find("[2]<stderr>:round 0\n"), std::string::npos) << t.err;
  EXPECT_NE(t.err.find("[1]<stderr>:round 1\n"), std::string::npos) << t.err;
  EXPECT_NE(t.err.find("  missing rank 1:\n    rank 1 (host 127.0.0.3, pid "), std::string::npos) << t.err;
  EXPECT_NE(
      t.err.find("hvdrun: the job stalled for 3 s and hvdrun ended it (--stall-check-shutdown-time-seconds): "
                 "rank 1 on host 127.0.0.3 stopped progressing"),
      std::string::npos)
      << t.err;
  // The report's table: round 1's two ranks, rank 1 with process 2's last stderr line.
  EXPECT_NE(t.err.find("stalled (cause)   round 1\n"), std::string::npos) << t.err;
  EXPECT_EQ(t.err.find("  2     127.0.0.2"), std::string::npos) << t.err;
}

}  // namespace
}  // namespace hvdrun
