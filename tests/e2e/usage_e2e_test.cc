// Bad command lines, host lists and hostfiles: hvdrun exits 2 with one line on stderr that names
// what is wrong, prints nothing on stdout, and starts nothing.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "tests/e2e/console_output.h"
#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

// Placeholders in UsageCase arguments and expected words.
constexpr char kCommand[] = "{command}";      // the rank program, printing HVDRUN_RANK if it ever runs
constexpr char kHostfile[] = "{hostfile}";    // a file holding UsageCase::hostfile
constexpr char kMissingFile[] = "{missing}";  // a path where no file is

struct UsageCase {
  std::string name;
  std::vector<std::string> args;
  // Each must appear in the error line.
  std::vector<std::string> expected_words;
  std::string hostfile{};
  // NAME=VALUE entries added to hvdrun's environment (Slurm's variables).
  std::vector<std::string> env{};
};

// Names the case in gtest's messages instead of dumping its bytes.
void PrintTo(const UsageCase& test_case, std::ostream* out) { *out << test_case.name; }

class UsageTest : public testing::TestWithParam<UsageCase> {};

std::string Substitute(std::string text, const std::string& placeholder, const std::string& value) {
  for (size_t at = text.find(placeholder); at != std::string::npos;
       at = text.find(placeholder, at + value.size())) {
    text.replace(at, placeholder.size(), value);
  }
  return text;
}

TEST_P(UsageTest, ExitsWithOneErrorLine) {
  const UsageCase& param = GetParam();
  ScratchDir dir;
  const std::string hostfile = dir.WriteFile("hostfile", param.hostfile);
  auto expand = [&](const std::string& text) {
    return Substitute(Substitute(text, kHostfile, hostfile), kMissingFile, dir.path() + "/no-such-hostfile");
  };
  std::vector<std::string> args;
  for (const std::string& arg : param.args) {
    if (arg == kCommand) {
      for (const std::string& word : RankCommand({"env", "HVDRUN_RANK"})) args.push_back(word);
    } else {
      args.push_back(expand(arg));
    }
  }
  ProcessOptions options;
  options.unset_env = {"HVDRUN_E2E_NEVER_SET"};
  options.extra_env = param.env;

  ProcessResult result = RunHvdrun(args, options);
  EXPECT_EQ(result.exit_code, 2) << result;
  EXPECT_EQ(result.stdout_text, "") << result;
  std::vector<std::string> lines = SplitLines(result.stderr_text);
  ASSERT_EQ(lines.size(), 1u) << result;
  EXPECT_EQ(result.stderr_text.back(), '\n') << result;
  EXPECT_EQ(lines[0].rfind("hvdrun: ", 0), 0u) << result;
  for (const std::string& word : param.expected_words) {
    EXPECT_NE(lines[0].find(expand(word)), std::string::npos) << "missing '" << expand(word) << "'" << result;
  }
}

INSTANTIATE_TEST_SUITE_P(
    BadInputs, UsageTest,
    testing::Values(
        UsageCase{"NpZero", {"-np", "0", kCommand}, {"-np", "0"}},
        UsageCase{"NpNotANumber", {"-np", "many", kCommand}, {"-np", "many"}},
        UsageCase{"NpWithoutValue", {"-np"}, {"-np"}},
        UsageCase{"NpAboveTheSlots", {"-np", "5", "-H", "localhost:4", kCommand}, {"-np 5", "4 slots"}},
        UsageCase{"SlotsNotANumber", {"-H", "server1:x", kCommand}, {"server1:x", "slots"}},
        UsageCase{"SlotsZero", {"-H", "localhost:0", kCommand}, {"localhost:0"}},
        UsageCase{"EmptyHostEntry", {"-H", "a,,b", kCommand}, {"-H", "empty entry"}},
        UsageCase{"TrailingComma", {"-H", "localhost:1,", kCommand}, {"-H", "empty entry"}},
        UsageCase{"Ipv6WithoutBrackets", {"-H", "fe80::1:2", kCommand}, {"fe80::1:2", "brackets"}},
        UsageCase{"BadHostCharacter", {"-H", "local/host:2", kCommand}, {"local/host"}},
        UsageCase{"UnreadableHostfile", {"--hostfile", kMissingFile, kCommand}, {"--hostfile", kMissingFile}},
        UsageCase{"MalformedHostfileLine",
                  {"--hostfile", kHostfile, kCommand},
                  {std::string(kHostfile) + ":3:", "slotz=2"},
                  "# hosts\nlocalhost slots=2\n127.0.0.1 slotz=2\n"},
        UsageCase{"HostfileBadSlots",
                  {"--hostfile", kHostfile, kCommand},
                  {std::string(kHostfile) + ":1:", "slots", "got '-1'"},
                  "localhost slots=-1\n"},
        // Slot counts: -H and hostfiles share one limit and one wording, and sums are checked.
        UsageCase{
            "SlotsAboveTheLimit", {"-H", "localhost:2000000", kCommand}, {"from 1 to 1048576", "'2000000'"}},
        UsageCase{"HostfileSlotsAboveTheLimit",
                  {"--hostfile", kHostfile, kCommand},
                  {std::string(kHostfile) + ":1:", "from 1 to 1048576", "'2000000'"},
                  "localhost slots=2000000\n"},
        UsageCase{"HostfileSlotsOverflow",
                  {"--hostfile", kHostfile, kCommand},
                  {std::string(kHostfile) + ":2:", "from 1 to 1048576", "'2147483647'"},
                  "localhost max_slots=2\nlocalhost slots=2147483647\n"},
        UsageCase{"HostfileSlotsAddUpPastTheLimit",
                  {"--hostfile", kHostfile, kCommand},
                  {std::string(kHostfile) + ":2:", "add up to 1048577, more than 1048576"},
                  "localhost max_slots=2\nlocalhost slots=1048576\n"},
        // An empty value is an error naming its flag, never "not given".
        UsageCase{
            "EmptyHostList", {"-np", "1", "-H", "", kCommand}, {"-H: the value is empty; expected HOSTS"}},
        UsageCase{"EmptyHostListWithHostfile",
                  {"-H", "", "--hostfile", kHostfile, kCommand},
                  {"-H: the value is empty"},
                  "localhost slots=1\n"},
        UsageCase{
            "EmptyHostfile", {"-np", "1", "--hostfile", "", kCommand}, {"--hostfile: the value is empty"}},
        UsageCase{
            "EmptyIdentityFile", {"-np", "1", "-i", "", kCommand}, {"-i: the value is empty; expected FILE"}},
        UsageCase{"BadSshUser", {"--ssh-user", "a b", "-np", "1", kCommand}, {"--ssh-user 'a b'"}},
        // Host names libssh would refuse are refused before anything starts, with the rule broken.
        UsageCase{"HostNameDot", {"-H", ".", kCommand}, {"'.'", "two in a row"}},
        UsageCase{"HostNameUnderscore", {"-H", "_", kCommand}, {"'_'", "letters, digits, '-' and '.'"}},
        UsageCase{
            "HostNameEndsWithDash", {"-H", "bad-", kCommand}, {"'bad-'", "cannot start or end with '-'"}},
        UsageCase{"MpiDryRunBadIpv6", {"--mpi", "--dry-run", "-H", "[:]:1", kCommand}, {"'[:]:1'", "IPv6"}},
        // Slurm's variables: sums checked, the longest list expanded in linear time.
        UsageCase{"SlurmTasksOverflow",
                  {"--mpi", "--dry-run", kCommand},
                  {"SLURM_TASKS_PER_NODE='1048576(x2048)'", "more than 1048576 tasks"},
                  "",
                  {"SLURM_JOB_ID=1", "SLURM_JOB_NODELIST=n[1-2048]", "SLURM_TASKS_PER_NODE=1048576(x2048)"}},
        UsageCase{"SlurmLongestNodeList",
                  {"--mpi", "--dry-run", kCommand},
                  {"gives 1048575 nodes", "has 1048576"},
                  "",
                  {"SLURM_JOB_ID=1", "SLURM_JOB_NODELIST=n[1-1048576]", "SLURM_TASKS_PER_NODE=1(x1048575)"}},
        UsageCase{"SlurmNodeListTooLong",
                  {"--mpi", "--dry-run", kCommand},
                  {"names more than 1048576 nodes"},
                  "",
                  {"SLURM_JOB_ID=1", "SLURM_JOB_NODELIST=n[1-1048577]", "SLURM_TASKS_PER_NODE=1"}},
        UsageCase{"HostfileWithoutHosts",
                  {"--hostfile", kHostfile, kCommand},
                  {kHostfile, "names no host"},
                  "# none\n"},
        UsageCase{"HostsAndHostfileTogether",
                  {"-H", "localhost:2", "--hostfile", kHostfile, kCommand},
                  {"-H", "--hostfile"},
                  "localhost slots=2\n"},
        UsageCase{"NoCommand", {"-np", "2"}, {"no command"}},
        UsageCase{"NoCommandAfterDoubleDash", {"-np", "2", "--"}, {"no command"}},
        UsageCase{"NoHostsNoNp", {kCommand}, {"-np"}},
        UsageCase{"UnknownLongFlag", {"--bogus", "-np", "2", kCommand}, {"--bogus"}},
        UsageCase{"UnknownShortFlag", {"-q", "-np", "2", kCommand}, {"-q"}},
        UsageCase{"ExportBadName", {"-x", "1BAD=3", "-np", "1", kCommand}, {"1BAD"}},
        UsageCase{"ExportEmptyName", {"-x", "=3", "-np", "1", kCommand}, {"-x", "=3"}},
        UsageCase{"ExportUnsetVariable",
                  {"-x", "HVDRUN_E2E_NEVER_SET", "-np", "1", kCommand},
                  {"HVDRUN_E2E_NEVER_SET"}},
        UsageCase{"StartTimeoutZero", {"--start-timeout", "0", "-np", "1", kCommand}, {"--start-timeout"}},
        UsageCase{"NetworkInterfaceBadName",
                  {"--network-interface", "eth0/1", "-np", "1", kCommand},
                  {"--network-interface", "eth0/1"}},
        UsageCase{"NetworkInterfaceNotOnThisMachine",
                  {"--network-interface", "hvdrun-none0", "--gloo", "-np", "2", kCommand},
                  {"--network-interface", "no network interface named hvdrun-none0", "lo 127.0.0.1"}},
        UsageCase{"NetworkInterfaceNotOnThisMachineUnderMpi",
                  {"--network-interface", "hvdrun-none0", "--mpi", "-np", "2", kCommand},
                  {"--network-interface", "no network interface named hvdrun-none0"}},
        UsageCase{"NetworkInterfaceNotOnTheRanksHost",
                  {"--network-interface", "hvdrun-none0", "-np", "2", kCommand},
                  {"--network-interface", "no network interface named hvdrun-none0"}}),
    [](const testing::TestParamInfo<UsageCase>& test_info) { return test_info.param.name; });

}  // namespace
}  // namespace hvdrun::e2e
