#include "agent/agent.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "agent/agent_under_test.h"
#include "common/protocol/agent_protocol.h"
#include "common/version.h"

namespace hvdrun {
namespace {

using testing::AgentUnderTest;

protocol::Launch LaunchOf(int32_t rank, const std::string& script) {
  protocol::Launch launch;
  launch.kill_grace_ms = 1000;
  protocol::RankLaunch one;
  one.rank = rank;
  one.argv = {"sh", "-c", script};
  launch.ranks.push_back(one);
  return launch;
}

void Greet(AgentUnderTest& agent) {
  protocol::Hello hello;
  hello.hvdrun_version = kVersion;
  agent.Send(hello);
  std::optional<protocol::Message> reply = agent.Next();
  ASSERT_TRUE(reply.has_value());
  ASSERT_TRUE(std::holds_alternative<protocol::AgentHello>(*reply));
}

// Waits for `rank`'s RankStarted, its one line of output and its RankExited with `code`.
void ExpectRun(AgentUnderTest& agent, int32_t rank, const std::string& line, int code) {
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
  AgentUnderTest agent;
  Greet(agent);
  agent.Send(LaunchOf(0, "echo first; exit 0"));
  ExpectRun(agent, 0, "first", 0);
  // The job grows: a second Launch while the agent runs, with a rank number of its own.
  agent.Send(LaunchOf(5, "echo second; exit 3"));
  ExpectRun(agent, 5, "second", 3);
  EXPECT_EQ(agent.Finish(), 0);
}

TEST(Agent, ALaunchReusingARankNumberIsRefused) {
  AgentUnderTest agent;
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
