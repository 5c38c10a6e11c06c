#include "launcher/elastic/host_discovery.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/scratch_dir.h"

namespace hvdrun {
namespace {

using e2e::ScratchDir;
using namespace std::chrono_literals;

std::string Script(const ScratchDir& dir, const std::string& name, const std::string& body) {
  std::string path = dir.WriteFile(name, "#!/bin/sh\n" + body);
  ::chmod(path.c_str(), 0755);
  return path;
}

std::string Text(const std::vector<HostSlots>& hosts) {
  std::string text;
  for (const HostSlots& host : hosts) text += FormatHostSlots(host) + " ";
  return text;
}

TEST(HostDiscovery, LinesAreHostsWithSlotsOrTheDefault) {
  StatusOr<std::vector<HostSlots>> hosts = ParseDiscoveredHosts("a:2\n\n  b \n[fe80::1]\nc:1\na:1\n", 3);
  ASSERT_TRUE(hosts.ok()) << hosts.status().message();
  EXPECT_EQ(Text(hosts.value()), "a:3 b:3 [fe80::1]:3 c:1 ");
  EXPECT_TRUE(ParseDiscoveredHosts("", 1).value().empty());
}

TEST(HostDiscovery, ABadLineIsNamed) {
  const std::string bad_slots = ParseDiscoveredHosts("a:2\nb:x\n", 1).status().message();
  EXPECT_EQ(bad_slots.rfind("line 2: 'b:x': ", 0), 0u) << bad_slots;
  EXPECT_EQ(bad_slots.find("-H"), std::string::npos) << bad_slots;
  EXPECT_EQ(ParseDiscoveredHosts("a:2,b:2\n", 1).status().message(), "line 1: 'a:2,b:2': one host per line");
  EXPECT_FALSE(ParseDiscoveredHosts("not a host name!\n", 1).ok());
}

TEST(HostDiscovery, RunsTheScriptAsAProgram) {
  ScratchDir dir;
  std::string good = Script(dir, "good.sh", "echo host-1:2; echo host-2\n");
  StatusOr<std::vector<HostSlots>> hosts = DiscoverHosts(good, 4);
  ASSERT_TRUE(hosts.ok()) << hosts.status().message();
  EXPECT_EQ(Text(hosts.value()), "host-1:2 host-2:4 ");
  // The path is executed, never given to a shell: a name with a space and ';' stays one name.
  std::string odd = Script(dir, "odd; name.sh", "echo host-3\n");
  ASSERT_TRUE(DiscoverHosts(odd, 1).ok());
}

TEST(HostDiscovery, FailuresNameTheScriptAndTheProblem) {
  ScratchDir dir;
  std::string failing = Script(dir, "failing.sh", "echo a; exit 3\n");
  EXPECT_EQ(DiscoverHosts(failing, 1).status().message(),
            "host discovery script '" + failing + "': '" + failing + "' failed: exit code 3");
  std::string garbage = Script(dir, "garbage.sh", "echo 'oops: no'\n");
  EXPECT_EQ(
      DiscoverHosts(garbage, 1)
          .status()
          .message()
          .rfind("host discovery script '" + garbage + "': its output is not 'host[:slots]' lines: line 1: ",
                 0),
      0u);
  std::string slow = Script(dir, "slow.sh", "sleep 30\n");
  EXPECT_NE(DiscoverHosts(slow, 1, 200ms).status().message().find("did not finish within"),
            std::string::npos);
  EXPECT_NE(DiscoverHosts(dir.path() + "/missing.sh", 1).status().message().find("cannot run"),
            std::string::npos);
}

TEST(HostDiscovery, HostsOutsideTheAllowedOnesAreLeftOutWithOneLine) {
  const AllowedHosts allowed{{"n1", "n2", "n3"}, "Slurm job 42 (SLURM_JOB_NODELIST='n[1-3]')"};
  std::string warning = "stale";
  EXPECT_EQ(Text(KeepAllowedHosts({HostSlots{"n1", 1}, HostSlots{"n3", 2}}, allowed, "./h", &warning)),
            "n1:1 n3:2 ");
  EXPECT_EQ(warning, "");
  EXPECT_EQ(Text(KeepAllowedHosts({HostSlots{"n1", 1}, HostSlots{"n9", 1}}, allowed, "./h", &warning)),
            "n1:1 ");
  EXPECT_EQ(
      warning,
      "host discovery script './h': host n9 is not a node of Slurm job 42 (SLURM_JOB_NODELIST='n[1-3]'); "
      "the job goes on without it");
  EXPECT_TRUE(KeepAllowedHosts({HostSlots{"a", 1}, HostSlots{"b", 1}}, allowed, "./h", &warning).empty());
  EXPECT_EQ(
      warning,
      "host discovery script './h': hosts a, b are not nodes of Slurm job 42 (SLURM_JOB_NODELIST='n[1-3]'); "
      "the job goes on without them");
  // No allowed hosts: any host.
  EXPECT_EQ(Text(KeepAllowedHosts({HostSlots{"a", 1}}, AllowedHosts{}, "./h", &warning)), "a:1 ");
  EXPECT_EQ(warning, "");
}

TEST(HostDiscovery, AHostNotAllowedIsSaidOnceWhileTheScriptNamesIt) {
  ScratchDir dir;
  std::string script = Script(dir, "hosts.sh", "echo n1; echo n9\n");
  HostDiscovery discovery(script, 1, {HostSlots{"n1", 1}}, AllowedHosts{{"n1", "n2"}, "Slurm job 42"}, 20ms);
  discovery.Start();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (discovery.runs() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_GE(discovery.runs(), 3u);
  EXPECT_EQ(discovery.TakeWarnings(),
            std::vector<std::string>{"host discovery script '" + script +
                                     "': host n9 is not a node of Slurm job 42; the job goes on without it"});
  EXPECT_FALSE(discovery.TakeChange().has_value());  // n1 alone, as it started
}

TEST(HostDiscovery, TheJobKeepsItsLastGoodHostsAndHearsEachProblemOnce) {
  ScratchDir dir;
  const std::string state = dir.path() + "/state";
  // Prints the hosts in `state` when it holds some, else fails.
  std::string script = Script(dir, "hosts.sh", "test -s '" + state + "' || exit 1\ncat '" + state + "'\n");
  HostDiscovery discovery(script, 1, {HostSlots{"a", 1}}, AllowedHosts{}, 20ms);
  discovery.Start();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  std::vector<std::string> warnings;
  while (warnings.empty() && std::chrono::steady_clock::now() < deadline) {
    warnings = discovery.TakeWarnings();
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "host discovery script '" + script + "': '" + script +
                             "' failed: exit code 1; the job keeps its last hosts");
  std::this_thread::sleep_for(100ms);  // several more failing runs: the same problem, not repeated
  EXPECT_TRUE(discovery.TakeWarnings().empty());
  EXPECT_FALSE(discovery.TakeChange().has_value());
  dir.WriteFile("state", "a\nb:2\n");
  std::optional<std::vector<HostSlots>> change;
  while (!change && std::chrono::steady_clock::now() < deadline) {
    change = discovery.TakeChange();
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(Text(*change), "a:1 b:2 ");
  EXPECT_FALSE(discovery.TakeChange().has_value());
}

}  // namespace
}  // namespace hvdrun
