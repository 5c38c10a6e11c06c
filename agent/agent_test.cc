#include "agent/agent.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "common/process/file_descriptor.h"
#include "common/protocol/agent_protocol.h"
#include "common/version.h"

namespace hvdrun {
namespace {

// An agent in a child process (Run() owns the process's signals), spoken to over two pipes.
class AgentProcess {
 public:
  AgentProcess() {
    int to_agent[2];
    int from_agent[2];
    EXPECT_EQ(::pipe(to_agent), 0);
    EXPECT_EQ(::pipe(from_agent), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(to_agent[1]);
      ::close(from_agent[0]);
      Agent agent{UniqueFd(to_agent[0]), UniqueFd(from_agent[1])};
      ::_exit(agent.Run());
    }
    ::close(to_agent[0]);
    ::close(from_agent[1]);
    to_agent_ = UniqueFd(to_agent[1]);
    from_agent_ = UniqueFd(from_agent[0]);
  }
  ~AgentProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  void Send(const protocol::Message& message) {
    ASSERT_TRUE(WriteAll(to_agent_.get(), protocol::EncodeFrame(message)));
  }

  // The agent's next message other than Heartbeat and RankProgress; nullopt at end of stream or
  // after 10 s.
  std::optional<protocol::Message> Next() {
    while (true) {
      StatusOr<std::optional<protocol::Message>> next = decoder_.Next();
      if (!next.ok()) return std::nullopt;
      if (next.value().has_value()) {
        protocol::Message message = std::move(*next.value());
        if (std::holds_alternative<protocol::Heartbeat>(message) ||
            std::holds_alternative<protocol::RankProgress>(message)) {
          continue;
        }
        return message;
      }
      pollfd readable{from_agent_.get(), POLLIN, 0};
      if (::poll(&readable, 1, 10'000) <= 0) return std::nullopt;
      char buffer[4096];
      ssize_t n = ::read(from_agent_.get(), buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      decoder_.Append(std::string_view(buffer, static_cast<size_t>(n)));
    }
  }

  // Closes the control stream and returns the agent's exit code.
  int Finish() {
    to_agent_.Reset();
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  UniqueFd to_agent_;
  UniqueFd from_agent_;
  protocol::FrameDecoder decoder_;
};

protocol::Launch LaunchOf(int32_t rank, const std::string& script) {
  protocol::Launch launch;
  launch.kill_grace_ms = 1000;
  protocol::RankLaunch one;
  one.rank = rank;
  one.argv = {"sh", "-c", script};
  launch.ranks.push_back(one);
  return launch;
}

void Greet(AgentProcess& agent) {
  protocol::Hello hello;
  hello.hvdrun_version = kVersion;
  agent.Send(hello);
  std::optional<protocol::Message> reply = agent.Next();
  ASSERT_TRUE(reply.has_value());
  ASSERT_TRUE(std::holds_alternative<protocol::AgentHello>(*reply));
}

// Waits for `rank`'s RankStarted, its one line of output and its RankExited with `code`.
void ExpectRun(AgentProcess& agent, int32_t rank, const std::string& line, int code) {
  std::optional<protocol::Message> started = agent.Next();
  ASSERT_TRUE(started.has_value());
  ASSERT_TRUE(std::holds_alternative<protocol::RankStarted>(*started)) << protocol::MessageName(*started);
  EXPECT_EQ(std::get<protocol::RankStarted>(*started).rank, rank);
  std::optional<protocol::Message> output = agent.Next();
  ASSERT_TRUE(output.has_value());
  ASSERT_TRUE(std::holds_alternative<protocol::RankOutput>(*output)) << protocol::MessageName(*output);
  EXPECT_EQ(std::get<protocol::RankOutput>(*output).rank, rank);
  EXPECT_EQ(std::get<protocol::RankOutput>(*output).data, line);
  std::optional<protocol::Message> exited = agent.Next();
  ASSERT_TRUE(exited.has_value());
  ASSERT_TRUE(std::holds_alternative<protocol::RankExited>(*exited)) << protocol::MessageName(*exited);
  EXPECT_EQ(std::get<protocol::RankExited>(*exited).rank, rank);
  EXPECT_EQ(std::get<protocol::RankExited>(*exited).exit_code, code);
}

TEST(Agent, ALaterLaunchStartsMoreRanksBesideTheFirst) {
  AgentProcess agent;
  Greet(agent);
  agent.Send(LaunchOf(0, "echo first; exit 0"));
  ExpectRun(agent, 0, "first", 0);
  // The job grows: a second Launch while the agent runs, with a rank number of its own.
  agent.Send(LaunchOf(5, "echo second; exit 3"));
  ExpectRun(agent, 5, "second", 3);
  EXPECT_EQ(agent.Finish(), 0);
}

TEST(Agent, ALaunchReusingARankNumberIsRefused) {
  AgentProcess agent;
  Greet(agent);
  agent.Send(LaunchOf(2, "echo first"));
  ExpectRun(agent, 2, "first", 0);
  agent.Send(LaunchOf(2, "echo again"));
  std::optional<protocol::Message> error = agent.Next();
  ASSERT_TRUE(error.has_value());
  ASSERT_TRUE(std::holds_alternative<protocol::AgentError>(*error)) << protocol::MessageName(*error);
  EXPECT_EQ(std::get<protocol::AgentError>(*error).message,
            "the launcher sent Launch for rank 2, which this agent already started");
  EXPECT_EQ(agent.Finish(), 3);
}

}  // namespace
}  // namespace hvdrun
