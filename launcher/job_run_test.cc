#include "launcher/job_run.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include "common/exit_codes.h"
#include "launcher/fake_rank_launcher.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun {
namespace {

using StopMode = RankLauncher::StopMode;
using std::chrono::milliseconds;

LaunchOptions Options(std::vector<HostSlots> hosts) {
  LaunchOptions options;
  options.hosts = std::move(hosts);
  for (const HostSlots& host : options.hosts) options.num_proc += host.slots;
  options.command = {"train"};
  options.working_dir = "/work";
  return options;
}

std::map<std::string, std::string> EnvOf(const JobLaunch& launch, const RankAssignment& assignment,
                                         int rank) {
  std::map<std::string, std::string> env;
  for (const std::string& entry : BuildRankEnvironment(assignment, rank, launch.environment)) {
    env[entry.substr(0, entry.find('='))] = entry.substr(entry.find('=') + 1);
  }
  return env;
}

// A job over a fake launcher and fake signals, both owned by the job and inspected after it ran.
class TestJob {
 public:
  explicit TestJob(LaunchOptions options, std::vector<ReachedHost> hosts = {})
      : fake(new FakeRankLauncher(std::move(hosts))), signals(new FakeSignalWatch()) {
    job_ = std::make_unique<JobRun>(std::move(options), std::unique_ptr<RankLauncher>(fake),
                                    std::unique_ptr<SignalWatch>(signals));
  }
  // Runs the job, capturing hvdrun's stderr; returns the exit code.
  int Run() {
    testing::internal::CaptureStderr();
    exit_code = job_->Run();
    err = testing::internal::GetCapturedStderr();
    return exit_code;
  }

  JobRun& job() { return *job_; }

  FakeRankLauncher* fake;
  FakeSignalWatch* signals;
  int exit_code = -1;
  std::string err;

 private:
  std::unique_ptr<JobRun> job_;
};

TEST(JobRun, EveryRankSucceedingIsExitZeroWithoutAStop) {
  TestJob t(Options({{"localhost", 2}}));
  t.fake->Then(FakeRankLauncher::Exit(0, 0)).Then(FakeRankLauncher::Exit(1, 0));
  EXPECT_EQ(t.Run(), 0) << t.err;
  EXPECT_TRUE(t.fake->stops().empty());
  EXPECT_TRUE(t.fake->shut_down());
  EXPECT_EQ(t.err, "");
  ASSERT_TRUE(t.fake->verdict().has_value());
  EXPECT_TRUE(t.fake->verdict()->every_rank_succeeded);
  EXPECT_FALSE(t.fake->verdict()->failure_found);
}

TEST(JobRun, TheFirstFailureStopsTheOthersAndIsReported) {
  TestJob t(Options({{"localhost", 2}, {"127.0.0.2", 2}}));
  t.fake->Then(FakeRankLauncher::Print(2, "rank 2: out of memory")).Then(FakeRankLauncher::Exit(2, 3));
  EXPECT_EQ(t.Run(), 3);
  EXPECT_EQ(t.fake->stops(), std::vector<StopMode>{StopMode::kGraceful});
  EXPECT_NE(
      t.err.find("hvdrun: rank 2 on host 127.0.0.2 failed first (exit code 3); hvdrun stopped the other "
                 "ranks.\n"),
      std::string::npos)
      << t.err;
  EXPECT_NE(t.err.find("stopped by hvdrun"), std::string::npos);
  EXPECT_NE(t.err.find("rank 2: out of memory"), std::string::npos);
  EXPECT_TRUE(t.fake->verdict()->failure_found);
}

TEST(JobRun, AFailureAfterTheStopBeganIsNotTheFirst) {
  TestJob t(Options({{"localhost", 3}}));
  // Rank 1 fails; while the job stops, rank 0 fails on its own with another code.
  t.fake->Then(FakeRankLauncher::Exit(1, 7)).Then(FakeRankLauncher::Exit(0, 9));
  EXPECT_EQ(t.Run(), 7);
  EXPECT_NE(t.err.find("rank 1 on host localhost failed first (exit code 7)"), std::string::npos) << t.err;
}

TEST(JobRun, TheRanksOwnClocksOrderFailuresThatArriveTogether) {
  TestJob t(Options({{"localhost", 2}}));
  // Both failures arrive in one round (as under mpirun, from records read at the end): rank 1's
  // arrives first but ended later.
  t.fake->Then([](FakeRankLauncher& /*f*/, RankEvents& events) {
    for (auto [rank, code, end_ns] : {std::tuple{1, 5, 2'000}, std::tuple{0, 6, 1'000}}) {
      RankEnd end;
      end.exit.rank = rank;
      end.exit.exit_code = code;
      end.end_unix_ns = end_ns;
      events.RankEnded(end);
    }
  });
  EXPECT_EQ(t.Run(), 6) << t.err;
}

TEST(JobRun, ALostHostsRanksFailTheJobAndTheOthersAreStopped) {
  TestJob t(Options({{"localhost", 2}, {"127.0.0.2", 2}}));
  t.fake->Then([](FakeRankLauncher& f, RankEvents& events) {
    FakeRankLauncher::Lost(2, "agent failed: no heartbeat for 30 s (--heartbeat-timeout)")(f, events);
    FakeRankLauncher::Lost(3, "agent failed: no heartbeat for 30 s (--heartbeat-timeout)")(f, events);
  });
  EXPECT_EQ(t.Run(), 1) << t.err;
  EXPECT_EQ(t.fake->stops(), std::vector<StopMode>{StopMode::kGraceful});
  EXPECT_NE(t.err.find("rank 2 on host 127.0.0.2 failed first (agent failed: no heartbeat for 30 s "
                       "(--heartbeat-timeout))"),
            std::string::npos)
      << t.err;
}

TEST(JobRun, ASignalStopsEveryRankAndASecondInterruptKillsThem) {
  TestJob t(Options({{"localhost", 2}}));
  FakeSignalWatch* signals = t.signals;
  t.fake->IgnoreGracefulStop()
      .Then([signals](FakeRankLauncher& /*f*/, RankEvents& /*events*/) { signals->Raise(SIGINT); })
      .Then([signals](FakeRankLauncher& /*f*/, RankEvents& /*events*/) { signals->Raise(SIGINT); });
  EXPECT_EQ(t.Run(), 128 + SIGINT);
  EXPECT_EQ(t.fake->stops(), (std::vector<StopMode>{StopMode::kGraceful, StopMode::kNow}));
  EXPECT_NE(t.err.find("hvdrun: SIGINT received: stopping every rank\n"), std::string::npos);
  EXPECT_NE(t.err.find("hvdrun: second interrupt: killing every rank now\n"), std::string::npos);
  EXPECT_NE(t.err.find("hvdrun: stopped by SIGINT\n"), std::string::npos) << t.err;
}

TEST(JobRun, RepeatedSigtermsStopTheJobOnce) {
  TestJob t(Options({{"localhost", 2}}));
  FakeSignalWatch* signals = t.signals;
  t.fake->Then([signals](FakeRankLauncher& /*f*/, RankEvents& /*events*/) {
    signals->Raise(SIGTERM);
    signals->Raise(SIGTERM);
  });
  EXPECT_EQ(t.Run(), 128 + SIGTERM);
  EXPECT_EQ(t.fake->stops(), std::vector<StopMode>{StopMode::kGraceful});
}

TEST(JobRun, AnInterruptWhileReachingHostsLaunchesNothing) {
  TestJob t(Options({{"localhost", 1}}));
  FakeSignalWatch* signals = t.signals;
  t.fake
      ->WhileReaching([signals](FakeRankLauncher& /*f*/, RankEvents& /*events*/) { signals->Raise(SIGHUP); })
      .WhileReaching([](FakeRankLauncher& /*f*/, RankEvents& /*events*/) {});
  EXPECT_EQ(t.Run(), 128 + SIGHUP) << t.err;
  EXPECT_FALSE(t.fake->launched().has_value());
  EXPECT_TRUE(t.fake->shut_down());
}

TEST(JobRun, AHostThatFailsToStartFailsTheJobAfterEveryHostAnswered) {
  TestJob t(Options({{"localhost", 1}, {"server1", 1}, {"server2", 1}}));
  t.fake
      ->WhileReaching([](FakeRankLauncher& /*f*/, RankEvents& events) {
        events.StartFailed(1, "connect: connection refused", kExitLaunchFailure);
      })
      .WhileReaching([](FakeRankLauncher& /*f*/, RankEvents& events) {
        events.StartFailed(2, "auth: no key was accepted", kExitLaunchFailure);
      });
  EXPECT_EQ(t.Run(), kExitLaunchFailure);
  EXPECT_EQ(t.err,
            "hvdrun: host server1: connect: connection refused\n"
            "hvdrun: host server2: auth: no key was accepted\n");
  EXPECT_FALSE(t.fake->launched().has_value());
  EXPECT_TRUE(t.fake->shut_down());
}

TEST(JobRun, APlanThatCannotBePlacedIsAUsageErrorBeforeAnythingStarts) {
  LaunchOptions options = Options({{"localhost", 2}});
  options.num_proc = 3;
  TestJob t(options);
  EXPECT_EQ(t.Run(), kExitUsage);
  EXPECT_EQ(t.err.rfind("hvdrun: ", 0), 0u) << t.err;
  EXPECT_FALSE(t.fake->launched().has_value());
  EXPECT_FALSE(t.fake->shut_down());
}

TEST(JobRun, EachHostIsPlacedOnTheNetworkByOneRule) {
  // Rank 0 on this machine; server1 and server2 reached over SSH.
  std::vector<ReachedHost> hosts(3);
  hosts[0] = {.this_machine = true,
              .interfaces_known = true,
              .interfaces = {{"lo", "127.0.0.1"}, {"eth0", "10.0.0.1"}},
              .free_port = 29500};
  hosts[1] = {.address = "10.0.0.2", .interfaces_known = true, .interfaces = {{"eth0", "10.0.0.2"}}};
  hosts[2] = {.address = "10.0.0.3", .interfaces_known = true, .interfaces = {{"enp1s0", "10.0.0.3"}}};
  LaunchOptions options = Options({{"localhost", 1}, {"server1", 1}, {"server2", 1}});
  TestJob t(options, hosts);
  t.fake->SetLocalAddress({"10.0.0.1", "the local end of the SSH connection to server1"});
  t.fake->Then(FakeRankLauncher::Exit(0, 0))
      .Then(FakeRankLauncher::Exit(1, 0))
      .Then(FakeRankLauncher::Exit(2, 0));
  ASSERT_EQ(t.Run(), 0) << t.err;
  const std::optional<JobLaunch>& launched = t.fake->launched();
  ASSERT_TRUE(launched.has_value());
  StatusOr<RankAssignment> assignment = RankAssignment::Assign(options.hosts, 3);
  ASSERT_TRUE(assignment.ok());
  std::map<std::string, std::string> rank0 = EnvOf(*launched, assignment.value(), 0);
  std::map<std::string, std::string> rank2 = EnvOf(*launched, assignment.value(), 2);
  EXPECT_EQ(rank0["MASTER_ADDR"], "10.0.0.1");
  EXPECT_EQ(rank0["MASTER_PORT"], "29500");
  EXPECT_EQ(rank0["HVDRUN_HOST_ADDR"], "10.0.0.1");
  EXPECT_EQ(rank0["GLOO_SOCKET_IFNAME"], "eth0");
  EXPECT_EQ(rank2["MASTER_ADDR"], "10.0.0.1");
  EXPECT_EQ(rank2["HVDRUN_HOST_ADDR"], "10.0.0.3");
  EXPECT_EQ(rank2["GLOO_SOCKET_IFNAME"], "enp1s0");
  EXPECT_EQ(rank2["NCCL_SOCKET_IFNAME"], "enp1s0");
  EXPECT_EQ(launched->working_dir, "/work");
  EXPECT_EQ(launched->command, std::vector<std::string>{"train"});
  EXPECT_EQ(launched->rendezvous, nullptr);  // no backend, no rendezvous service
}

TEST(JobRun, AJobAllOnThisMachineKeepsItsHostsNamesAndNamesNoInterface) {
  TestJob t(Options({{"localhost", 2}}));
  t.fake->Then(FakeRankLauncher::Exit(0, 0)).Then(FakeRankLauncher::Exit(1, 0));
  ASSERT_EQ(t.Run(), 0) << t.err;
  StatusOr<RankAssignment> assignment = RankAssignment::Assign({{"localhost", 2}}, 2);
  ASSERT_TRUE(assignment.ok());
  std::map<std::string, std::string> env = EnvOf(*t.fake->launched(), assignment.value(), 1);
  EXPECT_EQ(env["HVDRUN_HOST_ADDR"], "127.0.0.1");
  EXPECT_EQ(env["MASTER_ADDR"], "127.0.0.1");
  EXPECT_FALSE(env.contains("GLOO_SOCKET_IFNAME"));
}

TEST(JobRun, ABackendJobGetsTheRendezvousServiceOnTheChosenAddress) {
  LaunchOptions options = Options({{"localhost", 2}});
  options.backend = BackendKind::kGloo;
  TestJob t(options);
  t.fake->Then(FakeRankLauncher::Exit(0, 0)).Then(FakeRankLauncher::Exit(1, 0));
  ASSERT_EQ(t.Run(), 0) << t.err;
  const JobEnvironment& job = t.fake->launched()->environment;
  EXPECT_EQ(job.backend, "gloo");
  EXPECT_EQ(job.rendezvous_addr, "127.0.0.1");
  EXPECT_NE(job.rendezvous_port, 0);
  EXPECT_EQ(job.secret.size(), 64u);
  EXPECT_NE(t.fake->launched()->rendezvous, nullptr);
}

TEST(JobRun, AHostWithoutTheNamedInterfaceIsAUsageError) {
  std::vector<ReachedHost> hosts(2);
  hosts[0] = {.this_machine = true, .interfaces_known = true, .interfaces = {{"data0", "10.78.0.1"}}};
  hosts[1] = {.address = "10.77.0.2", .interfaces_known = true, .interfaces = {{"eth0", "10.77.0.2"}}};
  LaunchOptions options = Options({{"localhost", 1}, {"server2", 1}});
  options.network_interfaces = {"data0"};
  TestJob t(options, hosts);
  t.fake->SetLocalAddress({"10.77.0.1", "the local end of the SSH connection to server2"});
  EXPECT_EQ(t.Run(), kExitUsage);
  EXPECT_EQ(
      t.err,
      "hvdrun: --network-interface: host server2: no network interface named data0 with an IPv4 address (it "
      "has eth0 10.77.0.2)\n");
  EXPECT_FALSE(t.fake->launched().has_value());
  EXPECT_TRUE(t.fake->shut_down());
}

TEST(JobRun, ALauncherThatStartedNoRankSaysSoInItsOwnWords) {
  TestJob t(Options({{"localhost", 1}}));
  t.fake->SetEnding({.description = "mpirun exited with code 1", .started_no_rank = true, .exit_code = 3});
  t.fake->Then(FakeRankLauncher::Lost(0, "its program never started"));
  EXPECT_EQ(t.Run(), 3);
  EXPECT_EQ(t.err, "hvdrun: mpirun exited with code 1 before starting any rank (its messages are above)\n");
}

TEST(JobRun, ALauncherThatFailedThoughEveryRankSucceededGivesItsCode) {
  TestJob t(Options({{"localhost", 1}}));
  t.fake->SetEnding({.description = "mpirun exited with code 2", .failed = true, .exit_code = 2});
  t.fake->Then(FakeRankLauncher::Exit(0, 0));
  EXPECT_EQ(t.Run(), 2);
  EXPECT_EQ(
      t.err,
      "hvdrun: mpirun exited with code 2, although every rank exited with 0 (its messages are above)\n");
}

TEST(JobRun, TheResultsDirectoryHoldsThePlanAndEachHostsFacts) {
  std::vector<ReachedHost> hosts(1);
  hosts[0] = {.this_machine = true, .facts = {{"kernel", "Linux 6.1.0", "uname"}}};
  e2e::ScratchDir dir;
  LaunchOptions options = Options({{"localhost", 1}});
  options.results_dir = dir.path() + "/results";
  TestJob t(options, hosts);
  t.fake->Then(FakeRankLauncher::Exit(0, 0));
  EXPECT_EQ(t.Run(), 0) << t.err;
  EXPECT_TRUE(std::filesystem::exists(options.results_dir + "/plan.json"));
  EXPECT_TRUE(std::filesystem::exists(options.results_dir + "/summary.json"));
  std::ifstream facts(options.results_dir + "/hosts/localhost.json");
  std::string text((std::istreambuf_iterator<char>(facts)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("Linux 6.1.0"), std::string::npos) << text;
}

// Rank `rank`'s progress: waiting in `pending`, or stopped by SIGSTOP when `stopped`.
RankState Progress(int rank, std::vector<std::string> pending, bool stopped = false) {
  RankState state;
  state.rank = rank;
  state.reported = true;
  state.process = stopped ? RankProcess::kStopped : RankProcess::kRunning;
  state.stop_signal = stopped ? SIGSTOP : 0;
  state.completed = 12;
  state.last_completed = "grad.conv1";
  for (std::string& name : pending) {
    state.pending.push_back({.name = std::move(name), .op = "allreduce", .bytes = 64});
  }
  return state;
}

// A test's clock for the stall check, moved on by the script's steps.
struct TestClock {
  std::shared_ptr<StallClock::time_point> now = std::make_shared<StallClock::time_point>();
  std::function<StallClock::time_point()> Reader() const {
    return [now = now] { return *now; };
  }
  FakeRankLauncher::Step Advance(int ms) const {
    return [now = now, ms](FakeRankLauncher& /*f*/, RankEvents& /*events*/) { *now += milliseconds(ms); };
  }
};

TEST(JobRun, AStalledJobIsWarnedOfEachCheckTimeAndEndedAtTheShutdownTime) {
  LaunchOptions options = Options({{"localhost", 2}});
  options.exports = {"HOROVOD_STALL_CHECK_TIME_SECONDS=1", "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS=3"};
  TestJob t(options);
  TestClock clock;
  t.job().SetClockForTesting(clock.Reader());
  t.fake->Then(FakeRankLauncher::Progress(Progress(0, {"grad.fc"})))
      .Then(FakeRankLauncher::Progress(Progress(1, {}, /*stopped=*/true)));
  for (int i = 0; i < 12; ++i) t.fake->Then(clock.Advance(250));
  EXPECT_EQ(t.Run(), kExitStall) << t.err;
  EXPECT_EQ(t.fake->stops(), std::vector<StopMode>{StopMode::kGraceful});
  size_t warnings = 0;
  for (size_t at = t.err.find("submitted by some ranks and not others"); at != std::string::npos;
       at = t.err.find("submitted by some ranks and not others", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 3u) << t.err;  // at 1, 2 and 3 s
  EXPECT_NE(t.err.find("1 tensor was submitted by some ranks and not others: 'grad.fc'\n  waiting: rank 0\n"
                       "  missing rank 1:\n    rank 1 (host localhost, pid 1001): stopped by SIGSTOP"),
            std::string::npos)
      << t.err;
  EXPECT_NE(t.err.find("hvdrun: stall: no collective completed for 3 s: stopping every rank "
                       "(--stall-check-shutdown-time-seconds)\n"),
            std::string::npos)
      << t.err;
  EXPECT_NE(
      t.err.find("hvdrun: the job stalled for 3 s and hvdrun ended it (--stall-check-shutdown-time-seconds): "
                 "rank 1 on host localhost stopped progressing (stopped by SIGSTOP"),
      std::string::npos)
      << t.err;
  EXPECT_TRUE(t.fake->verdict()->failure_found);
}

TEST(JobRun, ARankThatFailsWaitingForAStoppedRankBlamesTheStoppedRank) {
  TestJob t(Options({{"localhost", 2}}));
  TestClock clock;
  t.job().SetClockForTesting(clock.Reader());
  t.fake->Then(FakeRankLauncher::Progress(Progress(0, {"grad.fc"})))
      .Then(FakeRankLauncher::Progress(Progress(1, {}, /*stopped=*/true)))
      .Then(clock.Advance(5000))
      .Then(FakeRankLauncher::Exit(0, 1));
  EXPECT_EQ(t.Run(), 1) << t.err;
  EXPECT_EQ(t.err.find("hvdrun: stall:"), std::string::npos) << t.err;  // 5 s is below the check time
  EXPECT_NE(t.err.find("hvdrun: rank 1 on host localhost stopped progressing (stopped by SIGSTOP"),
            std::string::npos)
      << t.err;
  EXPECT_NE(t.err.find("rank 0 failed first, waiting for it (exit code 1)"), std::string::npos) << t.err;
  EXPECT_NE(t.err.find("waiting for rank 1"), std::string::npos) << t.err;
  EXPECT_NE(t.err.find("stalled (cause)"), std::string::npos) << t.err;
}

TEST(JobRun, NoStallCheckSaysNothing) {
  LaunchOptions options = Options({{"localhost", 2}});
  options.exports = {"HOROVOD_STALL_CHECK_TIME_SECONDS=1", "HOROVOD_STALL_CHECK_DISABLE=1"};
  TestJob t(options);
  TestClock clock;
  t.job().SetClockForTesting(clock.Reader());
  t.fake->Then(FakeRankLauncher::Progress(Progress(0, {"grad.fc"})))
      .Then(clock.Advance(10000))
      .Then(FakeRankLauncher::Exit(0, 0))
      .Then(FakeRankLauncher::Exit(1, 0));
  EXPECT_EQ(t.Run(), 0) << t.err;
  EXPECT_EQ(t.err, "");
}

TEST(JobRun, SigusrOnePrintsEveryRanksStateAndTheJobGoesOn) {
  TestJob t(Options({{"localhost", 2}}));
  FakeSignalWatch* signals = t.signals;
  t.fake->Then(FakeRankLauncher::Progress(Progress(0, {"grad.fc"})))
      .Then(FakeRankLauncher::Exit(1, 0))
      .Then([signals](FakeRankLauncher& /*f*/, RankEvents& /*events*/) { signals->Raise(SIGUSR1); })
      .Then(FakeRankLauncher::Exit(0, 0));
  EXPECT_EQ(t.Run(), 0) << t.err;
  EXPECT_TRUE(t.fake->stops().empty());
  EXPECT_EQ(t.fake->progress_requests(), 2);  // the states, and the recorders
  EXPECT_EQ(t.fake->recorder_requests(), 1);
  EXPECT_EQ(
      t.err,
      "hvdrun: SIGUSR1: the ranks' states, as of their last report (at most a second old):\n"
      "  rank 0 (host localhost, pid 1000): waiting in allreduce 'grad.fc' (64 B) for 0 ms; last completed "
      "'grad.conv1' (12 done)\n"
      "  rank 1 (host localhost, pid 1001): ended (exit code 0)\n");
}

}  // namespace
}  // namespace hvdrun
