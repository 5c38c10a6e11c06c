#include "runtime/shm/fd_handover.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace hvdrun {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

TEST(FdListenerNameTest, IsHvdrunAndThirtyTwoHexDigits) {
  const unsigned char random[16] = {0x00, 0x01, 0xab, 0xff, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  EXPECT_EQ(FdListenerName(random), "hvdrun-0001abff0405060708090a0b0c0d0e0f");
}

// An admitted peer receives the very descriptor; one the caller turns away gets the connection
// closed, does not count, and is named at the deadline.
TEST(FdListenerTest, HandsTheDescriptorToAdmittedPeersOnly) {
  StatusOr<std::unique_ptr<FdListener>> listener = FdListener::Listen();
  ASSERT_TRUE(listener.ok()) << listener.status().message();
  EXPECT_EQ(listener.value()->name().rfind("hvdrun-", 0), 0U);
  const int memory = ::memfd_create("fd-handover-test", MFD_CLOEXEC);
  ASSERT_GE(memory, 0);
  struct stat sent {};
  ASSERT_EQ(::fstat(memory, &sent), 0);
  int calls = 0;
  const FdListener::Admit admit = [&](const PeerCredentials& peer) -> std::string {
    EXPECT_EQ(peer.pid, ::getpid());
    EXPECT_EQ(peer.uid, ::geteuid());
    return ++calls == 1 ? "not wanted" : "";
  };
  Status served;
  std::thread server([&] {
    served = listener.value()->Serve(memory, 1, Clock::now() + std::chrono::seconds(30), milliseconds(30000),
                                     admit);
  });
  const std::string name = listener.value()->name();
  StatusOr<int> refused = ReceiveFd(name, ::getpid(), Clock::now() + std::chrono::seconds(30));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "the connection was closed before the descriptor came");
  StatusOr<int> received = ReceiveFd(name, ::getpid(), Clock::now() + std::chrono::seconds(30));
  server.join();
  ASSERT_TRUE(served.ok()) << served.message();
  ASSERT_TRUE(received.ok()) << received.status().message();
  struct stat got {};
  ASSERT_EQ(::fstat(received.value(), &got), 0);
  EXPECT_EQ(got.st_ino, sent.st_ino);
  EXPECT_EQ(::fcntl(received.value(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  ::close(received.value());

  // Nobody else connects: the deadline ends the wait, naming what was turned away.
  calls = 0;
  std::thread late([&] { (void)ReceiveFd(name, ::getpid(), Clock::now() + std::chrono::seconds(30)); });
  Status timed_out =
      listener.value()->Serve(memory, 2, Clock::now() + milliseconds(1000), milliseconds(1000), admit);
  late.join();
  EXPECT_EQ(timed_out.message(), "did not connect within 1000 ms; turned away pid " +
                                     std::to_string(::getpid()) + " (uid " + std::to_string(::geteuid()) +
                                     "): not wanted");
  ::close(memory);
}

// A receiver checks whose socket it reached: another pid's is refused.
TEST(FdListenerTest, AReceiverRefusesAListenerOfAnotherPid) {
  StatusOr<std::unique_ptr<FdListener>> listener = FdListener::Listen();
  ASSERT_TRUE(listener.ok()) << listener.status().message();
  StatusOr<int> received =
      ReceiveFd(listener.value()->name(), ::getpid() + 1, Clock::now() + milliseconds(500));
  ASSERT_FALSE(received.ok());
  EXPECT_NE(received.status().message().find("not pid " + std::to_string(::getpid() + 1)), std::string::npos)
      << received.status().message();
}

}  // namespace
}  // namespace hvdrun
