#include "launcher/elastic/elastic_driver.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/scratch_dir.h"

namespace hvdrun {
namespace {

// A driver over three one-slot hosts with a clock the test moves, recording every key and line.
struct Driven {
  explicit Driven(const ElasticOptions& options,
                  const std::vector<HostSlots>& hosts = {{"a", 1}, {"b", 1}, {"c", 1}}) {
    int slots = 0;
    for (const HostSlots& host : hosts) slots += host.slots;
    RankAssignment first = RankAssignment::Assign(hosts, slots).value();
    driver = std::make_unique<ElasticDriver>(
        options, first, hosts, [this](const std::string& line) { lines.push_back(line); }, false,
        [this] { return now; });
    driver->Begin([this](const std::string& key, const std::string& value) {
      keys[key] = value;
      order.push_back(key);
    });
  }
  double now = 0;
  std::map<std::string, std::string> keys;
  std::vector<std::string> order;
  std::vector<std::string> lines;
  std::unique_ptr<ElasticDriver> driver;
};

ElasticOptions MinNp(int min_np) {
  ElasticOptions options;
  options.min_np = min_np;
  options.timeout_s = 10;
  return options;
}

TEST(ElasticDriver, RoundZeroIsTheLaunchAndItsVariablesNameEachWorker) {
  Driven d(MinNp(2));
  EXPECT_EQ(d.keys["elastic/0/rank/a/0/0"], "0 3 0 1 0 3 a");
  EXPECT_EQ(d.keys["elastic/0/rank/c/0/2"], "2 3 0 1 2 3 c");
  EXPECT_EQ(d.keys["elastic/round"], "0");
  EXPECT_EQ(d.keys["elastic/hosts_updated"], "0");
  EXPECT_EQ(d.order.back(), "elastic/round");
  EXPECT_EQ(d.driver->RankVariables(1),
            (std::vector<std::string>{"HVDRUN_ELASTIC=1", "HVDRUN_WORKER_ID=b/0/1", "HVDRUN_ROUND=0",
                                      "HVDRUN_ELASTIC_TIMEOUT_SECONDS=10"}));
}

TEST(ElasticDriver, AFailedWorkerReformsTheJobAfterTheSettleTime) {
  Driven d(MinNp(2));
  EXPECT_EQ(d.driver->WakeInMs(), -1);
  EXPECT_TRUE(d.driver->WorkerEnded(1, false, "killed by SIGKILL"));
  d.now = kSettleSeconds / 2;
  EXPECT_EQ(d.driver->WakeInMs(), 251);  // the job's loop wakes when the settle time ends
  EXPECT_FALSE(d.driver->Tick());
  EXPECT_EQ(d.keys["elastic/round"], "0");
  d.now = kSettleSeconds;
  EXPECT_FALSE(d.driver->Tick());
  EXPECT_EQ(d.driver->WakeInMs(), -1);
  EXPECT_EQ(d.keys["elastic/round"], "1");
  EXPECT_EQ(d.keys["elastic/1/rank/a/0/0"], "0 2 0 1 0 2 a");
  EXPECT_EQ(d.keys["elastic/1/rank/c/0/2"], "1 2 0 1 1 2 c");
  EXPECT_EQ(d.keys.count("elastic/1/rank/b/0/1"), 0u);
  EXPECT_EQ(d.order.back(), "elastic/round");
  ASSERT_EQ(d.lines.size(), 1u);
  EXPECT_EQ(d.lines[0],
            "elastic: round 1: 2 ranks on 2 hosts; hosts lost: b; added: none; why: b/0/1 killed by SIGKILL; "
            "re-formed in 0.5 s");
  EXPECT_EQ(d.driver->current_round(), (std::vector<int>{0, 2}));
  EXPECT_TRUE(d.driver->TookFailure(1));
  ASSERT_EQ(d.driver->rounds().size(), 2u);
  const JobRound& round = d.driver->rounds()[1];
  EXPECT_EQ(round.round, 1);
  EXPECT_EQ(round.size, 2);
  EXPECT_EQ(round.hosts, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(round.lost, std::vector<std::string>{"b"});
  EXPECT_TRUE(round.added.empty());
  EXPECT_EQ(round.why, "b/0/1 killed by SIGKILL");
  EXPECT_DOUBLE_EQ(round.formed_at_s, kSettleSeconds);
  EXPECT_DOUBLE_EQ(round.seconds, kSettleSeconds);
  nlohmann::json plan = d.driver->PlanJson();
  EXPECT_FALSE(plan.contains("rounds"));
  EXPECT_EQ(plan["min_np"], 2);
  EXPECT_TRUE(plan["max_np"].is_null());
}

TEST(ElasticDriver, TheOtherWorkersOfAFailedHostAreRemoved) {
  Driven d(MinNp(1), {{"a", 2}, {"b", 1}});
  EXPECT_TRUE(d.driver->WorkerEnded(0, false, "ended with exit 1"));
  d.now = 1;
  d.driver->Tick();
  EXPECT_EQ(d.keys["elastic/1/rank/a/1/1"], "removed");
  EXPECT_EQ(d.keys["elastic/1/rank/b/0/2"], "0 1 0 1 0 1 b");
  // The removed worker's own end is taken in stride, whatever its code.
  EXPECT_TRUE(d.driver->WorkerEnded(1, false, "ended with exit 1"));
  d.now = 2;
  EXPECT_FALSE(d.driver->Tick());
  EXPECT_EQ(d.keys["elastic/round"], "1");
}

TEST(ElasticDriver, BelowMinNpForTheTimeoutFailsNamingTheHostsLost) {
  Driven d(MinNp(3));
  EXPECT_TRUE(d.driver->WorkerEnded(2, false, "killed by SIGKILL"));
  d.now = 1;
  EXPECT_FALSE(d.driver->Tick());
  EXPECT_EQ(d.lines.back(),
            "elastic: 2 slots alive, fewer than --min-np 3 (c/0/2 killed by SIGKILL); waiting up to 10 s "
            "(--elastic-timeout)");
  d.now = 10.9;
  EXPECT_FALSE(d.driver->Tick());
  d.now = 11;
  EXPECT_TRUE(d.driver->Tick());
  EXPECT_EQ(
      d.driver->FailureReport(),
      (std::vector<std::string>{
          "elastic job failed in round 0: 2 slots alive for 10 s (--elastic-timeout), fewer than --min-np 3",
          "hosts lost: c (worker c/0/2 killed by SIGKILL)"}));
  EXPECT_EQ(d.driver->SummaryJson()["hosts_lost"]["c"], "worker c/0/2 killed by SIGKILL");
}

TEST(ElasticDriver, AReformationPastTheResetLimitFails) {
  ElasticOptions options = MinNp(1);
  options.reset_limit = 1;
  Driven d(options);
  d.driver->WorkerEnded(0, false, "killed by SIGKILL");
  d.now = 1;
  EXPECT_FALSE(d.driver->Tick());
  d.driver->WorkerEnded(1, false, "killed by SIGKILL");
  d.now = 2;
  EXPECT_TRUE(d.driver->Tick());
  EXPECT_EQ(d.driver->FailureReport()[0],
            "elastic job failed in round 1: a re-formation past --reset-limit 1 (b/0/1 killed by SIGKILL)");
}

TEST(ElasticDriver, OnceARankSucceededAFailureStopsTheJob) {
  Driven d(MinNp(1));
  EXPECT_TRUE(d.driver->WorkerEnded(0, true, ""));
  EXPECT_FALSE(d.driver->WorkerEnded(1, false, "ended with exit 3"));
}

TEST(ElasticDriver, EveryWorkerEndingBeforeTheReformationFailsTheJob) {
  Driven d(MinNp(1));
  for (int index = 0; index < 3; ++index) d.driver->WorkerEnded(index, false, "killed by SIGKILL");
  d.driver->JobEnded();
  EXPECT_TRUE(d.driver->failed());
}

// A WorkerStarter whose hosts' states the test sets; it records what the driver asks.
struct FakeStarter : WorkerStarter {
  HostState HostStateOf(const std::string& host, std::string* why) override {
    HostState state = states.count(host) > 0 ? states[host] : HostState::kNew;
    if (state == HostState::kFailed) {
      *why = "agent start: connect: connection refused";
      states.erase(host);  // said once
    }
    return state;
  }
  void ReachHost(const HostSlots& host) override {
    reached.push_back(host.host);
    states[host.host] = HostState::kReaching;
  }
  Status StartWorker(int index, const std::vector<WorkerPlace>& places, size_t place,
                     const std::vector<std::string>& variables) override {
    started.push_back(std::to_string(index) + " " + PlaceValue(places.at(place)));
    started_variables.push_back(variables);
    return Status::Ok();
  }
  std::map<std::string, HostState> states;
  std::vector<std::string> reached;
  std::vector<std::string> started;
  std::vector<std::vector<std::string>> started_variables;
};

// A job started on hosts a and b by a discovery script whose hosts file the test rewrites.
struct Growing {
  explicit Growing(int min_np = 2, std::optional<int> reset_limit = std::nullopt,
                   std::optional<CooldownRange> cooldown = std::nullopt) {
    hosts_file = dir.WriteFile("hosts", "a\nb\n");
    std::string script = dir.WriteFile("hosts.sh", "#!/bin/sh\ncat '" + hosts_file + "'\n");
    ::chmod(script.c_str(), 0755);
    ElasticOptions options = MinNp(min_np);
    options.discovery_script = script;
    options.reset_limit = reset_limit;
    options.cooldown = cooldown;
    std::vector<HostSlots> hosts = {{"a", 1}, {"b", 1}};
    driver = std::make_unique<ElasticDriver>(
        options, RankAssignment::Assign(hosts, 2).value(), hosts,
        [this](const std::string& line) { lines.push_back(line); }, false, [this] { return now; });
    driver->AllowGrowth(&starter);
    driver->Begin([this](const std::string& key, const std::string& value) { keys[key] = value; });
  }
  // The script's hosts from now on (replaced at once: the script never reads half a file).
  void SetHosts(const std::string& text) {
    std::rename(dir.WriteFile("hosts.new", text).c_str(), hosts_file.c_str());
  }
  // Ticks (the discovery thread runs the script every second) until `done`, for at most 5 s.
  template <typename Done>
  bool TickUntil(Done done) {
    for (int i = 0; i < 100 && !done(); ++i) {
      driver->Tick();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
  }
  e2e::ScratchDir dir;
  std::string hosts_file;
  double now = 0;
  FakeStarter starter;
  std::map<std::string, std::string> keys;
  std::vector<std::string> lines;
  std::unique_ptr<ElasticDriver> driver;
};

TEST(ElasticDriver, ADiscoveredHostJoinsOnceItsAgentIsReady) {
  Growing g;
  g.SetHosts("a\nb\nc\n");
  ASSERT_TRUE(g.TickUntil([&] { return !g.starter.reached.empty(); }));
  EXPECT_EQ(g.starter.reached, std::vector<std::string>{"c"});
  EXPECT_EQ(g.keys["elastic/round"], "0");  // a growth waits for its agents
  g.now = 2;
  g.driver->Tick();
  EXPECT_EQ(g.keys["elastic/round"], "0");
  g.starter.states["c"] = WorkerStarter::HostState::kReady;
  g.now = 3;
  EXPECT_FALSE(g.driver->Tick());
  EXPECT_EQ(g.keys["elastic/round"], "1");
  EXPECT_EQ(g.keys["elastic/hosts_updated"], "1");
  EXPECT_EQ(g.keys["elastic/1/rank/a/0/0"], "0 3 0 1 0 3 a");
  EXPECT_EQ(g.keys["elastic/1/rank/b/0/1"], "1 3 0 1 1 3 b");
  EXPECT_EQ(g.keys["elastic/1/rank/c/0/2"], "2 3 0 1 2 3 c");
  EXPECT_EQ(g.starter.started, std::vector<std::string>{"2 2 3 0 1 2 3 c"});
  EXPECT_EQ(g.starter.started_variables[0],
            (std::vector<std::string>{"HVDRUN_ELASTIC=1", "HVDRUN_WORKER_ID=c/0/2", "HVDRUN_ROUND=1",
                                      "HVDRUN_ELASTIC_TIMEOUT_SECONDS=10"}));
  EXPECT_EQ(g.driver->current_round(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(g.driver->workers(), 3);
  ASSERT_FALSE(g.lines.empty());
  EXPECT_EQ(g.lines.back().rfind("elastic: round 1: 3 ranks on 3 hosts; hosts lost: none; added: c; why: new "
                                 "slots on c; re-formed in ",
                                 0),
            0u)
      << g.lines.back();
  EXPECT_EQ(g.driver->rounds()[1].added, std::vector<std::string>{"c"});
  EXPECT_DOUBLE_EQ(g.driver->rounds()[1].formed_at_s, 3);  // the growth waited for c's agent
  EXPECT_DOUBLE_EQ(g.driver->rounds()[1].seconds, 3);
  // Nothing more to grow on.
  g.driver->Tick();
  EXPECT_EQ(g.keys["elastic/round"], "1");
  // A survivor ends first: the new worker, which may still wait for the survivors, is removed in
  // one more round so that it does not wait in vain.
  EXPECT_TRUE(g.driver->WorkerEnded(0, true, ""));
  EXPECT_EQ(g.keys["elastic/2/rank/c/0/2"], "removed");
  EXPECT_EQ(g.keys["elastic/2/rank/b/0/1"], "removed");
  EXPECT_EQ(g.keys["elastic/round"], "2");
}

TEST(ElasticDriver, AHostWhoseAgentFailsIsBlacklistedAndTheJobGoesOn) {
  Growing g;
  g.SetHosts("a\nb\nc\n");
  ASSERT_TRUE(g.TickUntil([&] { return !g.starter.reached.empty(); }));
  g.starter.states["c"] = WorkerStarter::HostState::kFailed;
  g.now = 1;
  g.driver->Tick();
  g.now = 2;
  g.driver->Tick();
  EXPECT_EQ(g.keys["elastic/round"], "0");
  EXPECT_EQ(g.starter.reached, std::vector<std::string>{"c"});  // out for good: never reached again
  EXPECT_EQ(g.lines.back(),
            "elastic: host c: agent start: connect: connection refused; the job goes on without it");
  EXPECT_TRUE(g.starter.started.empty());
}

TEST(ElasticDriver, AHostThatLeavesDiscoveryIsNoticedAtTheNextCommit) {
  Growing g(1);
  g.SetHosts("a\n");
  // Ticks a second apart on the driver's clock: past the settle time once discovery has run.
  ASSERT_TRUE(g.TickUntil([&] {
    g.now += 1;
    return g.keys["elastic/round"] == "1";
  }));
  EXPECT_EQ(g.keys["elastic/1/rank/b/0/1"], "removed");
  EXPECT_EQ(g.keys["elastic/1/rank/a/0/0"], "0 1 0 1 0 1 a");
  EXPECT_EQ(g.keys["elastic/hosts_updated"], "1");  // b's worker learns it at its next commit
  EXPECT_TRUE(g.starter.reached.empty());
}

// --reset-limit counts re-formations as Horovod's driver counts resets (registration.py): every
// new round after the first, whether hosts were lost, left discovery or were added.
TEST(ElasticDriver, AGrowthAndAHostLeavingEachCountForTheResetLimit) {
  Growing g(1, 1);
  g.SetHosts("a\nb\nc\n");
  ASSERT_TRUE(g.TickUntil([&] { return !g.starter.reached.empty(); }));
  g.starter.states["c"] = WorkerStarter::HostState::kReady;
  EXPECT_FALSE(g.driver->Tick());
  EXPECT_EQ(g.keys["elastic/round"], "1");  // the growth: the first re-formation, within the limit
  g.SetHosts("a\nc\n");
  ASSERT_TRUE(g.TickUntil([&] {
    g.now += 1;
    return g.driver->failed();
  }));
  EXPECT_EQ(g.keys["elastic/round"], "1");
  EXPECT_EQ(g.driver->FailureReport()[0],
            "elastic job failed in round 1: a re-formation past --reset-limit 1 (b left discovery)");
}

TEST(ElasticDriver, AResetLimitOfZeroRefusesEvenAGrowth) {
  Growing g(2, 0);
  g.SetHosts("a\nb\nc\n");
  ASSERT_TRUE(g.TickUntil([&] { return !g.starter.reached.empty(); }));
  g.starter.states["c"] = WorkerStarter::HostState::kReady;
  EXPECT_TRUE(g.driver->Tick());
  EXPECT_EQ(g.keys["elastic/round"], "0");
  EXPECT_TRUE(g.starter.started.empty());
  EXPECT_EQ(g.driver->FailureReport()[0],
            "elastic job failed in round 0: a re-formation past --reset-limit 0 (new slots on c)");
}

// --blacklist-cooldown-range 10 10: a host whose rank failed is out for 10 s, whatever discovery says
// meanwhile, and joins again after them; when it fails again it is out for its cooldown again.
TEST(ElasticDriver, AFailedHostIsNotUsedDuringItsCooldownAndJoinsAgainAfterIt) {
  Growing g(2, std::nullopt, CooldownRange{10, 10});
  g.SetHosts("a\nb\nc\n");
  const auto reach_and_grow = [&](const std::string& round) {
    EXPECT_TRUE(g.TickUntil([&] {
      if (!g.starter.reached.empty()) g.starter.states["c"] = WorkerStarter::HostState::kReady;
      return g.keys["elastic/round"] == round;
    }));
  };
  reach_and_grow("1");
  ASSERT_EQ(g.starter.started.size(), 1u);
  for (int failure = 1; failure <= 2; ++failure) {
    const int c = g.driver->workers() - 1;  // c's newest worker
    const double failed_at = g.now;
    EXPECT_TRUE(g.driver->WorkerEnded(c, false, "killed by SIGKILL"));
    g.now = failed_at + 1;  // past the settle time: the job re-forms without c
    g.driver->Tick();
    const std::string without_c = std::to_string(2 * failure);
    EXPECT_EQ(g.keys["elastic/round"], without_c);
    EXPECT_EQ(g.driver->current_round().size(), 2u);
    g.starter.reached.clear();
    g.starter.states.erase("c");
    // During the cooldown discovery still names c: it is neither reached nor given a place.
    for (int second = 2; second <= 9; ++second) {
      g.now = failed_at + second;
      g.driver->Tick();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_TRUE(g.starter.reached.empty()) << "failure " << failure;
    EXPECT_EQ(g.keys["elastic/round"], without_c);
    // After it, c joins again in the next round.
    g.now = failed_at + 10.5;
    reach_and_grow(std::to_string(2 * failure + 1));
    EXPECT_EQ(g.starter.reached, std::vector<std::string>{"c"}) << "failure " << failure;
    EXPECT_EQ(g.driver->current_round().size(), 3u);
  }
}

}  // namespace
}  // namespace hvdrun
