#include "common/placement/hostfile.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace hvdrun {
namespace {

TEST(Hostfile, ParsesLinesCommentsAndBlankLines) {
  StatusOr<std::vector<HostSlots>> hosts = ParseHostfile(
      "# lab machines\n"
      "\n"
      "server1 slots=4\n"
      "  server2\tslots=2 max_slots=8   # trailing comment\n"
      "server3\r\n"
      "[::1] slots=2\n"
      "server1 slots=1\n",
      "hosts.txt");
  ASSERT_TRUE(hosts.ok()) << hosts.status().message();
  EXPECT_EQ(hosts.value(),
            (std::vector<HostSlots>{{"server1", 5}, {"server2", 2}, {"server3", 1}, {"::1", 2}}));
}

// A file with CR line ends (old Mac) once read as one line, so that its first '#' hid every later host.
TEST(Hostfile, CarriageReturnsEndLinesAsNewlinesDo) {
  StatusOr<std::vector<HostSlots>> hosts =
      ParseHostfile("a slots=1\r# the next host\rb slots=2 # two\rc slots=3", "h");
  ASSERT_TRUE(hosts.ok()) << hosts.status().message();
  EXPECT_EQ(hosts.value(), (std::vector<HostSlots>{{"a", 1}, {"b", 2}, {"c", 3}}));
  // CR LF is one line end: line numbers count lines, not line ends.
  hosts = ParseHostfile("a slots=1\r\nb slots=x\r\n", "h");
  ASSERT_FALSE(hosts.ok());
  EXPECT_EQ(hosts.status().message().rfind("h:2: ", 0), 0u) << hosts.status().message();
  hosts = ParseHostfile("a slots=1\rb slots=x\r", "h");
  ASSERT_FALSE(hosts.ok());
  EXPECT_EQ(hosts.status().message().rfind("h:2: ", 0), 0u) << hosts.status().message();
}

TEST(Hostfile, NoTrailingNewline) {
  StatusOr<std::vector<HostSlots>> hosts = ParseHostfile("a slots=2", "h");
  ASSERT_TRUE(hosts.ok());
  EXPECT_EQ(hosts.value(), (std::vector<HostSlots>{{"a", 2}}));
}

TEST(Hostfile, UserAtHostSetsTheLogin) {
  StatusOr<std::vector<HostSlots>> hosts =
      ParseHostfile("alice@server1 slots=2\nserver2\nserver1 slots=1\nbob@[::1] slots=3\n", "h");
  ASSERT_TRUE(hosts.ok()) << hosts.status().message();
  EXPECT_EQ(hosts.value(),
            (std::vector<HostSlots>{{"server1", 3, "alice"}, {"server2", 1, ""}, {"::1", 3, "bob"}}));
}

struct InvalidCase {
  const char* contents;
  const char* message;
};

class HostfileInvalid : public testing::TestWithParam<InvalidCase> {};

TEST_P(HostfileInvalid, NamesFileLineAndProblem) {
  StatusOr<std::vector<HostSlots>> hosts = ParseHostfile(GetParam().contents, "hosts.txt");
  ASSERT_FALSE(hosts.ok());
  EXPECT_EQ(hosts.status().message(), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Files, HostfileInvalid,
    testing::Values(
        InvalidCase{"a slots=2\nb slots=x\n",
                    "hosts.txt:2: slots must be a whole number from 1 to 1048576, got 'x'"},
        InvalidCase{"a slots=0", "hosts.txt:1: slots must be a whole number from 1 to 1048576, got '0'"},
        // The limit and the wording of -H's slots (host_spec_test.cc), and the sum checked.
        InvalidCase{"localhost slots=2000000",
                    "hosts.txt:1: slots must be a whole number from 1 to 1048576, got '2000000'"},
        InvalidCase{"localhost max_slots=2\nlocalhost slots=2147483647",
                    "hosts.txt:2: slots must be a whole number from 1 to 1048576, got '2147483647'"},
        InvalidCase{
            "localhost max_slots=2\nlocalhost slots=1048576",
            "hosts.txt:2: the slots add up to 1048577, more than 1048576 (the most ranks one job runs)"},
        InvalidCase{"a slots=1048576\nb",
                    "hosts.txt:2: the slots add up to 1048577, more than 1048576 (the most "
                    "ranks one job runs)"},
        InvalidCase{". slots=1", "hosts.txt:1: host '.': a '.' at the start or end, or two in a row"},
        InvalidCase{"\n\na slot=4",
                    "hosts.txt:3: unexpected 'slot=4' (expected slots=N or max_slots=N after the host)"},
        InvalidCase{"a 4", "hosts.txt:1: unexpected '4' (expected slots=N or max_slots=N after the host)"},
        InvalidCase{"localhost:2",
                    "hosts.txt:1: 'localhost:2' is -H's form; a hostfile line is 'host slots=N' (write "
                    "'localhost slots=2')"},
        InvalidCase{"# hosts\nalice@server1:4 max_slots=4",
                    "hosts.txt:2: 'alice@server1:4' is -H's form; a hostfile line is 'host slots=N' (write "
                    "'alice@server1 slots=4')"},
        InvalidCase{"a slots=4 max_slots=2", "hosts.txt:1: max_slots=2 is below slots=4"},
        InvalidCase{"a max_slots=-1",
                    "hosts.txt:1: max_slots must be a whole number from 1 to 1048576, got '-1'"},
        InvalidCase{"b@d! slots=1",
                    "hosts.txt:1: host 'b@d!': host names may hold only letters, digits, '-' and '.'"},
        InvalidCase{"@d slots=1", "hosts.txt:1: host '@d': empty user name before '@'"},
        InvalidCase{"a@d\nb@d slots=2",
                    "hosts.txt:2: host 'd' is already named with user 'a' (one login per host)"},
        InvalidCase{"# nothing\n\n",
                    "--hostfile: hosts.txt names no host (expected lines like 'server1 slots=4')"}));

TEST(Hostfile, ReadsFromDisk) {
  char path[] = "/tmp/hvdrun_hostfile_XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::ofstream(path) << "localhost slots=3\n";
  StatusOr<std::vector<HostSlots>> hosts = ReadHostfile(path);
  std::remove(path);
  ASSERT_TRUE(hosts.ok()) << hosts.status().message();
  EXPECT_EQ(hosts.value(), (std::vector<HostSlots>{{"localhost", 3}}));
}

TEST(Hostfile, UnreadableFileIsNamed) {
  StatusOr<std::vector<HostSlots>> hosts = ReadHostfile("/nonexistent/hosts.txt");
  ASSERT_FALSE(hosts.ok());
  EXPECT_EQ(hosts.status().message(),
            "--hostfile: cannot read '/nonexistent/hosts.txt': No such file or directory");
}

// hvdrun --hostfile /dev/zero once read forever.
TEST(Hostfile, AFileLargerThanAnyHostfileIsRefusedWithoutReadingItAll) {
  StatusOr<std::vector<HostSlots>> hosts = ReadHostfile("/dev/zero");
  ASSERT_FALSE(hosts.ok());
  EXPECT_EQ(hosts.status().message(),
            "--hostfile: '/dev/zero' holds more than 64 MiB (a hostfile lists hosts, one a line)");
}

TEST(Hostfile, DirectoryIsRefused) {
  StatusOr<std::vector<HostSlots>> hosts = ReadHostfile("/tmp");
  ASSERT_FALSE(hosts.ok());
  EXPECT_EQ(hosts.status().message(), "--hostfile: cannot read '/tmp': Is a directory");
}

}  // namespace
}  // namespace hvdrun
