#include "launcher/ssh/ssh_session.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "launcher/ssh/ssh_agent_transport.h"

namespace hvdrun {
namespace {

// A loopback port that refuses connections: bound, never listening.
class RefusingPort {
 public:
  RefusingPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0) << std::strerror(errno);
    socklen_t length = sizeof(address);
    EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length), 0) << std::strerror(errno);
    port_ = ntohs(address.sin_port);
  }
  ~RefusingPort() { ::close(fd_); }
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Whether reading `fd` comes to its end of file within 5 s: the transport's thread has given up.
bool ReachesEndOfFile(int fd) {
  char byte = 0;
  ssize_t n = -1;
  for (int i = 0; i < 500 && n != 0; ++i) {
    n = ::read(fd, &byte, 1);
    if (n != 0) ::usleep(10'000);
  }
  return n == 0;
}

TEST(SshSessionTest, StagesHaveTheNamesErrorsUse) {
  EXPECT_STREQ(StageName(SshStage::kResolve), "resolve");
  EXPECT_STREQ(StageName(SshStage::kConnect), "connect");
  EXPECT_STREQ(StageName(SshStage::kHostKey), "host key");
  EXPECT_STREQ(StageName(SshStage::kAuth), "auth");
  EXPECT_STREQ(StageName(SshStage::kAgentStart), "agent start");
}

TEST(SshSessionTest, ARefusedConnectionFailsAtConnectNamingAddressAndPort) {
  RefusingPort refusing;
  SshOptions options;
  options.port = refusing.port();
  StatusOr<std::unique_ptr<SshSession>> session = SshSession::Create("127.0.0.1", options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  ASSERT_TRUE(session.value()->Resolve().ok());
  Status status = session.value()->Connect(SshSession::Clock::now() + std::chrono::seconds(5));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "connect: 127.0.0.1 port " + std::to_string(refusing.port()) +
                                  ": Connection refused (is sshd running there, on that port?)");
}

TEST(SshAgentTransportTest, AFailedStartEndsTheStreamAndNamesTheStage) {
  RefusingPort refusing;
  SshOptions options;
  options.port = refusing.port();
  UniqueFd to_agent;
  UniqueFd from_agent;
  StatusOr<std::unique_ptr<SshAgentTransport>> transport = SshAgentTransport::Start(
      "127.0.0.1", options, "hvdrun-agent", SshAgentTransport::Clock::now() + std::chrono::seconds(5),
      &to_agent, &from_agent);
  ASSERT_TRUE(transport.ok()) << transport.status().message();
  // The launcher's read end reaches its end of file once the thread has given up.
  ASSERT_TRUE(ReachesEndOfFile(from_agent.get()));
  EXPECT_TRUE(transport.value()->finished());
  SshAgentTransport::End end = transport.value()->end();
  EXPECT_EQ(end.stage, SshStage::kConnect);
  EXPECT_NE(end.reason.find("Connection refused"), std::string::npos) << end.reason;
}

TEST(SshAgentTransportTest, AHostNameLibsshRefusesFailsAtResolveOnce) {
  // `-H .` once gave "host .: resolve: resolve: '.' is not a host name libssh accepts: " (the
  // stage twice, an empty reason). -H refuses such names now; the transport still says it once.
  UniqueFd to_agent;
  UniqueFd from_agent;
  StatusOr<std::unique_ptr<SshAgentTransport>> transport = SshAgentTransport::Start(
      ".", SshOptions{}, "hvdrun-agent", SshAgentTransport::Clock::now() + std::chrono::seconds(5), &to_agent,
      &from_agent);
  ASSERT_TRUE(transport.ok()) << transport.status().message();
  ASSERT_TRUE(ReachesEndOfFile(from_agent.get()));
  SshAgentTransport::End end = transport.value()->end();
  EXPECT_EQ(end.stage, SshStage::kResolve);
  EXPECT_EQ(end.reason, "'.' is not a host name libssh accepts");
}

}  // namespace
}  // namespace hvdrun
