// An Agent, in a child process of the test, driven through its protocol: RankProgress every period
// and on request, from /proc and from the rank's progress board, and once more before the RankExited
// of a rank that failed.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "agent/agent_under_test.h"
#include "common/process/file_descriptor.h"
#include "common/progress/progress_board.h"
#include "common/protocol/agent_protocol.h"

namespace hvdrun {
namespace {

using protocol::Message;
using protocol::ProcessState;
using protocol::RankProgress;
using testing::AgentUnderTest;

TEST(AgentProgress, ReportsTheRanksBoardAndStateAndItsRecordsWhenItFails) {
  AgentUnderTest agent;
  agent.Send(protocol::Hello{protocol::kProtocolVersion, "test", 0, 0});
  ASSERT_TRUE(agent.AwaitA<protocol::AgentHello>());
  agent.Send(protocol::Launch{
      200, {{5, {"/bin/sh", "-c", "echo \"$HVDRUN_PROGRESS_FILE\"; exec sleep 60"}, {}, ""}}});
  std::optional<protocol::RankStarted> started = agent.AwaitA<protocol::RankStarted>();
  ASSERT_TRUE(started);
  std::optional<protocol::RankOutput> line = agent.AwaitA<protocol::RankOutput>();
  ASSERT_TRUE(line);
  const std::string board_path = line->data;
  ASSERT_NE(board_path.find("/rank-5"), std::string::npos) << board_path;

  // The first period's report, before the rank published anything.
  std::optional<RankProgress> first = agent.AwaitA<RankProgress>();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->rank, 5);
  EXPECT_EQ(first->pid, started->pid);
  EXPECT_FALSE(first->board_read);

  // What the rank's runtime would publish (the test writes the board in its place).
  StatusOr<std::unique_ptr<progress::ProgressBoard>> board = progress::ProgressBoard::Create(board_path, 8);
  ASSERT_TRUE(board.ok()) << board.status().message();
  for (const char* name : {"grad.a", "grad.b", "grad.c"}) {
    const uint64_t sequence = board.value()->Submitted(name, "allreduce", 16, 0);
    board.value()->Advance(sequence, protocol::CollectivePhase::kDone);
  }
  board.value()->Submitted("grad.d", "allreduce", 16, 0);
  agent.Send(protocol::ProgressRequest{true});
  std::optional<RankProgress> asked =
      agent.AwaitA<RankProgress>([](const RankProgress& p) { return !p.records.empty(); });
  ASSERT_TRUE(asked);
  EXPECT_EQ(asked->completed, 3u);
  EXPECT_EQ(asked->pending, 1u);
  EXPECT_EQ(asked->last_completed_name, "grad.c");
  EXPECT_EQ(asked->oldest_pending_name, "grad.d");
  EXPECT_EQ(asked->state, ProcessState::kSleeping);
  EXPECT_EQ(asked->records.size(), 4u);

  ::kill(started->pid, SIGSTOP);
  std::optional<RankProgress> stopped =
      agent.AwaitA<RankProgress>([](const RankProgress& p) { return p.state == ProcessState::kStopped; });
  ASSERT_TRUE(stopped);
  if (stopped->stop_signal == 0) {  // a report between the stop and the agent's waitpid: the next has it
    stopped =
        agent.AwaitA<RankProgress>([](const RankProgress& p) { return p.state == ProcessState::kStopped; });
    ASSERT_TRUE(stopped);
  }
  EXPECT_EQ(stopped->stop_signal, SIGSTOP);
  EXPECT_GT(stopped->state_since_unix_ms, 0);
  EXPECT_TRUE(stopped->records.empty());  // periodic reports carry none
  ::kill(started->pid, SIGCONT);

  // Terminate: the rank ends by SIGTERM, and its last report carries the flight recorder.
  agent.Send(protocol::Terminate{});
  std::optional<RankProgress> last =
      agent.AwaitA<RankProgress>([](const RankProgress& p) { return p.state == ProcessState::kExited; });
  ASSERT_TRUE(last);
  EXPECT_EQ(last->records.size(), 4u);
  EXPECT_EQ(last->records.back().name, "grad.d");
  std::optional<protocol::RankExited> exited = agent.AwaitA<protocol::RankExited>();
  ASSERT_TRUE(exited);
  EXPECT_EQ(exited->signal, SIGTERM);
  agent.CloseStream();
  ASSERT_TRUE(agent.Exited(std::chrono::seconds(10)));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(board_path).parent_path()));
}

}  // namespace
}  // namespace hvdrun
