// Elastic jobs (docs/elastic.md) with real processes: three one-slot hosts, all this machine, and
// shell ranks that fail on cue. The ranks run no hvd.elastic program, so they do not re-form
// themselves; what is tested is hvdrun's side: the job goes on, re-forms, ends on its survivors or
// fails as a whole, and leaves nothing running.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/job_marker.h"
#include "tests/e2e/process_runner.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

using std::chrono::milliseconds;

const std::vector<std::string> kThreeHosts = {"-np", "3", "-H", "127.0.0.1:1,127.0.0.2:1,127.0.0.3:1"};

ProcessResult RunMarked(const std::vector<std::string>& args) {
  JobMarker marker;
  ProcessResult result = RunHvdrun(args, marker.Options());
  std::vector<pid_t> left = marker.WaitUntilNoneRuns(milliseconds(2'000));
  EXPECT_TRUE(left.empty()) << "outlived hvdrun: " << left.size() << " processes";
  return result;
}

TEST(ElasticJob, AKilledRankLeavesTheJobToItsSurvivors) {
  // Rank 1 kills itself; the others end 2 s later, well after the re-formation.
  ScratchDir dir;
  ProcessResult result = RunMarked(Concat(
      {kThreeHosts,
       {"--min-np", "2", "--results", dir.path(), "sh", "-c",
        "if [ \"$HVDRUN_RANK\" = 1 ]; then kill -9 $$; fi; sleep 2; echo worker $HVDRUN_WORKER_ID done"}}));
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.stdout_text.find("worker 127.0.0.1/0/0 done"), std::string::npos) << result;
  EXPECT_NE(result.stdout_text.find("worker 127.0.0.3/0/2 done"), std::string::npos) << result;
  EXPECT_NE(
      result.stderr_text.find("hvdrun: elastic: round 1: 2 ranks on 2 hosts; hosts lost: 127.0.0.2; added: "
                              "none; why: 127.0.0.2/0/1 killed by SIGKILL; re-formed in "),
      std::string::npos)
      << result;
  // --results: summary.json records both rounds; the re-formation came after the settle time.
  const nlohmann::json summary = nlohmann::json::parse(ReadFileBytes(dir.path() + "/summary.json"));
  ASSERT_EQ(summary["rounds"].size(), 2u) << summary.dump(2);
  EXPECT_EQ(summary["rounds"][0]["why"], "start");
  EXPECT_EQ(summary["rounds"][0]["size"], 3);
  const nlohmann::json& round = summary["rounds"][1];
  EXPECT_EQ(round["round"], 1);
  EXPECT_EQ(round["size"], 2);
  EXPECT_EQ(round["hosts"], nlohmann::json::array({"127.0.0.1", "127.0.0.3"}));
  EXPECT_EQ(round["hosts_lost"], nlohmann::json::array({"127.0.0.2"}));
  EXPECT_EQ(round["hosts_added"], nlohmann::json::array());
  EXPECT_EQ(round["why"], "127.0.0.2/0/1 killed by SIGKILL");
  EXPECT_GE(round["seconds"].get<double>(), 0.5);
  EXPECT_GE(round["formed_at_seconds"].get<double>(), round["seconds"].get<double>());
  EXPECT_EQ(summary["elastic"]["final_round"], 1);
}

TEST(ElasticJob, BelowMinNpForTheTimeoutFailsNamingTheHostLost) {
  ProcessResult result = RunMarked(Concat({kThreeHosts,
                                           {"--min-np", "3", "--elastic-timeout", "1", "sh", "-c",
                                            "if [ \"$HVDRUN_RANK\" = 2 ]; then exit 5; fi; sleep 30"}}));
  EXPECT_EQ(result.exit_code, 7) << result;
  EXPECT_NE(
      result.stderr_text.find("hvdrun: elastic job failed in round 0: 2 slots alive for 1 s "
                              "(--elastic-timeout), fewer than --min-np 3\n"
                              "hvdrun: hosts lost: 127.0.0.3 (worker 127.0.0.3/0/2 ended with exit 5)\n"),
      std::string::npos)
      << result;
}

TEST(ElasticJob, ADiscoveryScriptThatFailsIsAWarningAndTheJobGoesOn) {
  // The script names this machine once, then fails: the job keeps its host and ends normally.
  ScratchDir dir;
  const std::string marker = dir.path() + "/ran";
  const std::string script =
      dir.WriteFile("hosts.sh", "#!/bin/sh\nif [ -f '" + marker + "' ]; then exit 4; fi\n: > '" + marker +
                                    "'\necho 127.0.0.1:2\n");
  ASSERT_EQ(::chmod(script.c_str(), 0755), 0);
  ProcessResult result = RunMarked(
      {"-np", "2", "--host-discovery-script", script, "sh", "-c", "sleep 2; echo size $HVDRUN_SIZE"});
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.stdout_text.find("size 2"), std::string::npos) << result;
  EXPECT_NE(result.stderr_text.find("hvdrun: host discovery script '" + script + "': '" + script +
                                    "' failed: exit code 4; the job keeps its last hosts\n"),
            std::string::npos)
      << result;
}

// A discovery script that prints the hosts in DIR/hosts; Rewrite(...) is the shell command that
// replaces them at once (the script never reads half a file).
struct DiscoveredHosts {
  explicit DiscoveredHosts(const std::string& first) {
    file = dir.WriteFile("hosts", first);
    script = dir.WriteFile("hosts.sh", "#!/bin/sh\nexec cat '" + file + "'\n");
    EXPECT_EQ(::chmod(script.c_str(), 0755), 0);
  }
  std::string Rewrite(const std::string& hosts) const {
    return "printf '" + hosts + "' > '" + file + ".new' && mv '" + file + ".new' '" + file + "'";
  }
  ScratchDir dir;
  std::string file;
  std::string script;
};

TEST(ElasticJob, AHostThatDiscoveryAddsRunsANewRankInTheNextRound) {
  // Round 0's rank 0 adds a slot on its own host and a third host; round 0's ranks end 5 s later,
  // after the growth (discovery runs every second, the job loop turns at least every second).
  // Round 1 places the new slot's rank at 1, 127.0.0.2's (process 1) at 2 and the third host's at 3.
  DiscoveredHosts hosts("127.0.0.1\n127.0.0.2\n");
  const std::string out = hosts.dir.path() + "/out";
  const std::string joined = hosts.dir.path() + "/joined.";
  JobMarker marker;
  RunningProcess hvdrun = StartHvdrun(
      {"-np", "2", "--host-discovery-script", hosts.script, "--output-filename", out, "sh", "-c",
       "if [ \"$HVDRUN_ROUND$HVDRUN_RANK\" = 00 ]; then " +
           hosts.Rewrite("127.0.0.1:2\\n127.0.0.2\\n127.0.0.3\\n") +
           "; fi; if [ \"$HVDRUN_ROUND\" = 0 ]; then sleep 5; else : > '" + joined +
           "'$HVDRUN_RANK; sleep 2; fi; "
           "echo worker $HVDRUN_WORKER_ID: rank $HVDRUN_RANK of $HVDRUN_SIZE in round $HVDRUN_ROUND"},
      marker.Options());
  // Once both new ranks run, SIGUSR1 lists the stall check's ranks: round 1's, the new ones included.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!(std::filesystem::exists(joined + "1") && std::filesystem::exists(joined + "3")) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  std::this_thread::sleep_for(milliseconds(300));
  hvdrun.Signal(SIGUSR1);
  ProcessResult result = hvdrun.Wait(milliseconds(30'000));
  marker.ExpectNoneRunsWithin(milliseconds(2'000));
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.stderr_text.find("hvdrun: elastic: round 1: 4 ranks on 3 hosts; hosts lost: none; added: "
                                    "127.0.0.3; why: new slots on 127.0.0.1, 127.0.0.3; re-formed in "),
            std::string::npos)
      << result;
  // Each process is tagged with its rank in the newest round: 127.0.0.2's, still in round 0 (a
  // shell rank never re-forms), is rank 2 of round 1.
  for (const char* line : {"[0]<stdout>:worker 127.0.0.1/0/0: rank 0 of 2 in round 0\n",
                           "[2]<stdout>:worker 127.0.0.2/0/1: rank 1 of 2 in round 0\n",
                           "[1]<stdout>:worker 127.0.0.1/1/2: rank 1 of 4 in round 1\n",
                           "[3]<stdout>:worker 127.0.0.3/0/3: rank 3 of 4 in round 1\n"}) {
    EXPECT_NE(result.stdout_text.find(line), std::string::npos) << line << result;
  }
  const size_t states = result.stderr_text.find("hvdrun: SIGUSR1: the ranks' states");
  ASSERT_NE(states, std::string::npos) << result;
  for (const char* rank : {"  rank 1 (host 127.0.0.1, pid ", "  rank 2 (host 127.0.0.2, pid ",
                           "  rank 3 (host 127.0.0.3, pid "}) {
    EXPECT_NE(result.stderr_text.find(rank, states), std::string::npos) << rank << result;
  }
  // --output-filename: a directory per process, by the round it started in and its rank there.
  EXPECT_EQ(ReadFileBytes(out + "/rank.1/stdout"), "worker 127.0.0.2/0/1: rank 1 of 2 in round 0\n");
  EXPECT_EQ(ReadFileBytes(out + "/round.1/rank.1/stdout"), "worker 127.0.0.1/1/2: rank 1 of 4 in round 1\n");
  EXPECT_EQ(ReadFileBytes(out + "/round.1/rank.3/stdout"), "worker 127.0.0.3/0/3: rank 3 of 4 in round 1\n");
}

TEST(ElasticJob, AHostThatLeavesDiscoveryIsRemovedFromTheNextRound) {
  // The ranks are not elastic programs: they do not leave on their own, and the job ends with them.
  DiscoveredHosts hosts("127.0.0.1\n127.0.0.2\n127.0.0.3\n");
  ProcessResult result = RunMarked(
      {"-np", "3", "--min-np", "2", "--host-discovery-script", hosts.script, "sh", "-c",
       "if [ \"$HVDRUN_RANK\" = 0 ]; then " + hosts.Rewrite("127.0.0.1\\n127.0.0.2\\n") + "; fi; sleep 5"});
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.stderr_text.find("hvdrun: elastic: round 1: 2 ranks on 2 hosts; hosts lost: 127.0.0.3; "
                                    "added: none; why: 127.0.0.3 left discovery; re-formed in "),
            std::string::npos)
      << result;
}

}  // namespace
}  // namespace hvdrun::e2e
