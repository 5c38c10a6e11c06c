#include "launcher/ssh/remote_agent_command.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/shell_words.h"

namespace hvdrun {
namespace {

// A host's file system in miniature: a directory standing for its PATH and one standing for this
// machine's agent path, either of which may hold an hvdrun-agent that says where it was found.
class AgentPlaces : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "hvdrun-agent-places-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    std::filesystem::create_directory(path_dir());
    std::filesystem::create_directory(root_ + "/prefix");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::string path_dir() const { return root_ + "/path"; }
  std::string fallback() const { return root_ + "/prefix/hvdrun-agent"; }

  // An hvdrun-agent at `path` that prints `label` and its arguments.
  static void WriteAgent(const std::string& path, const std::string& label) {
    std::ofstream(path) << "#!/bin/sh\necho \"" << label << " $*\"\n";
    ASSERT_EQ(::chmod(path.c_str(), 0755), 0);
  }

  struct Outcome {
    int exit_status = -1;
    std::string output;  // stdout and stderr
  };

  // Runs `command` as a host's shell would, with PATH holding path_dir() (and where sh and echo are)
  // and "one two" as its arguments.
  Outcome Run(const std::string& command) const {
    std::string line = "PATH=" + ShellQuote(path_dir() + ":/usr/bin:/bin") + " " +
                       ShellJoin({"/bin/sh", "-c", command, "hvdrun-agent", "one", "two"}) + " 2>&1";
    Outcome outcome;
    FILE* pipe = ::popen(line.c_str(), "r");
    if (pipe == nullptr) return outcome;
    char buffer[256];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) outcome.output.append(buffer, n);
    int status = ::pclose(pipe);
    outcome.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return outcome;
  }

  std::string root_;
};

TEST_F(AgentPlaces, WithoutAFallbackTheCommandIsTheOneDocumented) {
  EXPECT_EQ(RemoteAgentCommand("hvdrun-agent", "", "", ""),
            "command -v hvdrun-agent >/dev/null 2>&1 || exit 127; exec hvdrun-agent");
  EXPECT_EQ(RemoteAgentCommand("/opt/my dir/it's", "", "", ""),
            "command -v '/opt/my dir/it'\\''s' >/dev/null 2>&1 || exit 127; exec '/opt/my dir/it'\\''s'");
}

TEST_F(AgentPlaces, TheAgentInTheHostsPathComesFirst) {
  WriteAgent(path_dir() + "/hvdrun-agent", "path");
  WriteAgent(fallback(), "fallback");
  Outcome outcome = Run(RemoteAgentCommand("hvdrun-agent", fallback(), "\"$@\"", ""));
  EXPECT_EQ(outcome.exit_status, 0) << outcome.output;
  EXPECT_EQ(outcome.output, "path one two\n");
}

TEST_F(AgentPlaces, AHostWithoutItInItsPathRunsThisMachinesAgentPath) {
  WriteAgent(fallback(), "fallback");
  Outcome outcome = Run(RemoteAgentCommand("hvdrun-agent", fallback(), "\"$@\"", ""));
  EXPECT_EQ(outcome.exit_status, 0) << outcome.output;
  EXPECT_EQ(outcome.output, "fallback one two\n");
  // Without arguments to pass on, as hvdrun's own start over SSH runs it.
  outcome = Run(RemoteAgentCommand("hvdrun-agent", fallback(), "", ""));
  EXPECT_EQ(outcome.output, "fallback \n");
}

TEST_F(AgentPlaces, AHostWithNeitherExits127SayingOnlyWhatItIsTold) {
  Outcome silent = Run(RemoteAgentCommand("hvdrun-agent", fallback(), "", ""));
  EXPECT_EQ(silent.exit_status, 127);
  EXPECT_EQ(silent.output, "");
  Outcome told = Run(RemoteAgentCommand("hvdrun-agent", fallback(), "\"$@\"", "echo 'not here' >&2"));
  EXPECT_EQ(told.exit_status, 127);
  EXPECT_EQ(told.output, "not here\n");
  // An explicit agent path is the only place tried.
  WriteAgent(fallback(), "fallback");
  EXPECT_EQ(Run(RemoteAgentCommand(root_ + "/nowhere/hvdrun-agent", "", "", "")).exit_status, 127);
}

TEST(RemoteAgentCommand, ReasonsNameEveryPlaceTried) {
  EXPECT_EQ(AgentNotFoundReason("/opt/hvdrun/bin/hvdrun-agent", ""),
            "'/opt/hvdrun/bin/hvdrun-agent' was not found on the host (exit status 127); install "
            "hvdrun-agent in its PATH or give --agent-path");
  EXPECT_EQ(AgentNotFoundReason("hvdrun-agent", "/opt/hvdrun/bin/hvdrun-agent"),
            "'hvdrun-agent' was found neither in the host's PATH nor at this machine's agent path "
            "'/opt/hvdrun/bin/hvdrun-agent' (exit status 127); install hvdrun-agent in one of those places "
            "or give --agent-path");
  EXPECT_EQ(AgentNotExecutableReason("hvdrun-agent", ""),
            "'hvdrun-agent' cannot be executed on the host (exit status 126)");
  EXPECT_EQ(AgentNotExecutableReason("hvdrun-agent", "/opt/hvdrun/bin/hvdrun-agent"),
            "'hvdrun-agent' in the host's PATH, or else this machine's agent path "
            "'/opt/hvdrun/bin/hvdrun-agent', cannot be executed on the host (exit status 126)");
}

}  // namespace
}  // namespace hvdrun
