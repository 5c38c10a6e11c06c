// An Agent, in a child process of the test, driven through its protocol: RankProgress every period
// and on request, from /proc and from the rank's progress board, and once more before the RankExited
// of a rank that failed.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "agent/agent.h"
#include "common/process/file_descriptor.h"
#include "common/progress/progress_board.h"
#include "common/protocol/agent_protocol.h"

namespace hvdrun {
namespace {

using protocol::Message;
using protocol::ProcessState;
using protocol::RankProgress;

// The agent's process and both ends of its control stream; the destructor stops what is left.
class AgentUnderTest {
 public:
  AgentUnderTest() {
    int to_agent[2];
    int from_agent[2];
    if (::pipe(to_agent) != 0 || ::pipe(from_agent) != 0) return;
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
  ~AgentUnderTest() {
    to_agent_.Reset();  // the agent stops its ranks and exits
    if (pid_ > 0 && !Exited(std::chrono::seconds(10))) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  bool Exited(std::chrono::seconds within) {
    for (auto end = std::chrono::steady_clock::now() + within; std::chrono::steady_clock::now() < end;) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return true;
      }
      ::usleep(10'000);
    }
    return false;
  }
  void Send(const Message& message) {
    ASSERT_TRUE(WriteAll(to_agent_.get(), protocol::EncodeFrame(message)));
  }
  void CloseStream() { to_agent_.Reset(); }

  // The next message that `wanted` accepts, within 10 s; others are skipped.
  std::optional<Message> Await(const std::function<bool(const Message&)>& wanted) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < end) {
      StatusOr<std::optional<Message>> next = decoder_.Next();
      if (!next.ok()) return std::nullopt;
      if (next.value().has_value()) {
        if (wanted(*next.value())) return next.value();
        continue;
      }
      pollfd readable{from_agent_.get(), POLLIN, 0};
      if (::poll(&readable, 1, 100) <= 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(from_agent_.get(), buffer, sizeof(buffer));
      if (n <= 0) return std::nullopt;
      decoder_.Append(std::string_view(buffer, static_cast<size_t>(n)));
    }
    return std::nullopt;
  }
  template <typename T>
  std::optional<T> AwaitA(const std::function<bool(const T&)>& also = [](const T&) { return true; }) {
    std::optional<Message> found = Await([&](const Message& m) {
      const T* typed = std::get_if<T>(&m);
      return typed != nullptr && also(*typed);
    });
    if (!found) return std::nullopt;
    return std::get<T>(*found);
  }

 private:
  pid_t pid_ = -1;
  UniqueFd to_agent_;
  UniqueFd from_agent_;
  protocol::FrameDecoder decoder_;
};

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
