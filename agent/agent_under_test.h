// AgentUnderTest: an Agent in a child process of a unit test (Run() owns the process's signals),
// spoken to over two pipes as hvdrun speaks to it. For agent/*_test.cc only.
//
// The destructor closes the control stream (the agent stops its ranks and exits) and waits up to
// 10 s for it, then SIGKILLs it: nothing outlives a failed test. Not thread-safe.
#ifndef HVDRUN_AGENT_AGENT_UNDER_TEST_H_
#define HVDRUN_AGENT_AGENT_UNDER_TEST_H_

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "agent/agent.h"
#include "common/process/file_descriptor.h"
#include "common/protocol/agent_protocol.h"

namespace hvdrun::testing {

class AgentUnderTest {
 public:
  AgentUnderTest() {
    int to_agent[2];
    int from_agent[2];
    if (::pipe(to_agent) != 0 || ::pipe(from_agent) != 0) {
      ADD_FAILURE() << "pipe: " << std::strerror(errno);
      return;
    }
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
    to_agent_.Reset();
    if (pid_ > 0 && !Exited(std::chrono::seconds(10))) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  AgentUnderTest(const AgentUnderTest&) = delete;
  AgentUnderTest& operator=(const AgentUnderTest&) = delete;

  void Send(const protocol::Message& message) {
    ASSERT_TRUE(WriteAll(to_agent_.get(), protocol::EncodeFrame(message)));
  }
  // Closes the control stream: the agent stops its ranks and exits.
  void CloseStream() { to_agent_.Reset(); }
  // Whether the agent has exited within `within` (it is reaped).
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
  // Closes the control stream and returns the agent's exit code (-1: killed by a signal).
  int Finish() {
    to_agent_.Reset();
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // The next message that `wanted` accepts, within 10 s; others are skipped. nullopt at the end of
  // the stream or past 10 s.
  std::optional<protocol::Message> Await(const std::function<bool(const protocol::Message&)>& wanted) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < end) {
      StatusOr<std::optional<protocol::Message>> next = decoder_.Next();
      if (!next.ok()) return std::nullopt;
      if (next.value().has_value()) {
        if (wanted(*next.value())) return next.value();
        continue;
      }
      pollfd readable{from_agent_.get(), POLLIN, 0};
      if (::poll(&readable, 1, 100) <= 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(from_agent_.get(), buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      decoder_.Append(std::string_view(buffer, static_cast<size_t>(n)));
    }
    return std::nullopt;
  }
  // The next message of type T that `also` accepts.
  template <typename T>
  std::optional<T> AwaitA(const std::function<bool(const T&)>& also = [](const T&) { return true; }) {
    std::optional<protocol::Message> found = Await([&](const protocol::Message& m) {
      const T* typed = std::get_if<T>(&m);
      return typed != nullptr && also(*typed);
    });
    if (!found) return std::nullopt;
    return std::get<T>(*found);
  }
  // The next message other than Heartbeat and RankProgress (which come on their own schedule).
  std::optional<protocol::Message> Next() {
    return Await([](const protocol::Message& m) {
      return !std::holds_alternative<protocol::Heartbeat>(m) &&
             !std::holds_alternative<protocol::RankProgress>(m);
    });
  }

 private:
  pid_t pid_ = -1;
  UniqueFd to_agent_;
  UniqueFd from_agent_;
  protocol::FrameDecoder decoder_;
};

}  // namespace hvdrun::testing

#endif  // HVDRUN_AGENT_AGENT_UNDER_TEST_H_
