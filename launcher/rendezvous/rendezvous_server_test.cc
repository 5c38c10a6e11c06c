#include "launcher/rendezvous/rendezvous_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <type_traits>

#include "common/process/file_descriptor.h"
#include "common/protocol/byte_codec.h"
#include "common/protocol/job_secret.h"
#include "common/protocol/rendezvous_client.h"
#include "common/protocol/rendezvous_protocol.h"
#include "common/protocol/rendezvous_test_peer.h"

namespace hvdrun {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Log lines from the service, collected across threads.
class LogLines {
 public:
  std::function<void(const std::string&)> Callback() {
    return [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mutex_);
      lines_.push_back(line);
      changed_.notify_all();
    };
  }
  // Waits (up to 10 s) for a line containing `part`; returns it, or "" if none came.
  std::string WaitFor(const std::string& part) {
    std::unique_lock<std::mutex> lock(mutex_);
    std::string found;
    changed_.wait_for(lock, seconds(10), [&] {
      for (const std::string& line : lines_) {
        if (line.find(part) != std::string::npos) {
          found = line;
          return true;
        }
      }
      return false;
    });
    return found;
  }
  std::vector<std::string> All() {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> lines_;
};

// The value, or `fallback` for an error.
template <typename T>
T ValueOr(StatusOr<T> result, std::type_identity_t<T> fallback) {
  return result.ok() ? std::move(result).value() : fallback;
}

class RendezvousTest : public ::testing::Test {
 protected:
  void StartServer(RendezvousLimits limits = {}) {
    auto server = RendezvousServer::Start("127.0.0.1", secret_, log_.Callback(), limits);
    ASSERT_TRUE(server.ok()) << server.status().message();
    server_ = std::move(server).value();
  }
  // A server that closes a connection idle for `idle_timeout` (RendezvousLimits::idle_timeout).
  void StartServerClosingIdleAfter(milliseconds idle_timeout) {
    RendezvousLimits limits;
    limits.idle_timeout = idle_timeout;
    StartServer(limits);
  }
  std::unique_ptr<RendezvousClient> NewClient() {
    auto client = RendezvousClient::Connect("127.0.0.1", server_->port(), secret_, seconds(5));
    EXPECT_TRUE(client.ok()) << client.status().message();
    return client.ok() ? std::move(client).value() : nullptr;
  }
  std::string Where() const { return "rendezvous 127.0.0.1:" + std::to_string(server_->port()); }

  // A raw TCP connection to the service.
  UniqueFd RawConnect() const {
    UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(server_->port());
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    timeval timeout{10, 0};
    setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    return fd;
  }
  // Whether the service closes the raw connection (reads until end of stream, skipping messages).
  static bool ClosedByService(int fd) {
    char buffer[4096];
    while (true) {
      ssize_t got = recv(fd, buffer, sizeof(buffer), 0);
      if (got == 0) return true;
      if (got < 0) return errno == ECONNRESET;
    }
  }
  // A raw connection that has completed the handshake.
  UniqueFd RawAuthenticated() {
    UniqueFd fd = RawConnect();
    rendezvous::FrameDecoder decoder;
    auto challenge = testing::ReceiveMessage(fd.get(), decoder);
    EXPECT_TRUE(challenge && std::holds_alternative<rendezvous::Challenge>(*challenge));
    if (!challenge) return fd;
    std::string nonce = std::get<rendezvous::Challenge>(*challenge).nonce;
    std::string frame = rendezvous::EncodeFrame(
        rendezvous::Proof{rendezvous::kProtocolVersion, HmacSha256Hex(secret_, nonce + "client")});
    EXPECT_TRUE(WriteAll(fd.get(), frame));
    auto welcome = testing::ReceiveMessage(fd.get(), decoder);
    EXPECT_TRUE(welcome && std::holds_alternative<rendezvous::Welcome>(*welcome));
    return fd;
  }

  std::string secret_ = NewJobSecret();
  LogLines log_;
  std::unique_ptr<RendezvousServer> server_;
};

TEST_F(RendezvousTest, EveryOperationRoundTrips) {
  StartServer();
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  std::string binary("\0\xff\n value", 9);
  ASSERT_TRUE(client->Set("gloo/0", binary).ok());
  StatusOr<std::string> value = client->Get("gloo/0", seconds(1));
  ASSERT_TRUE(value.ok()) << value.status().message();
  EXPECT_EQ(value.value(), binary);
  EXPECT_TRUE(client->Wait({"gloo/0"}, seconds(1)).ok());
  EXPECT_TRUE(client->Wait({}, seconds(1)).ok());
  StatusOr<int64_t> sum = client->Add("counter", 5);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum.value(), 5);
  EXPECT_EQ(client->Add("counter", -7).value(), -2);
  EXPECT_EQ(client->Get("counter", seconds(1)).value(), "-2");
  EXPECT_EQ(client->CompareAndSet("leader", "", "rank 0").value(), "rank 0");
  ASSERT_TRUE(client->Delete("gloo/0").ok());
  EXPECT_TRUE(client->SendReport(0, R"({"rank": 0})").ok());
  EXPECT_EQ(server_->Reports(), (std::map<int, std::string>{{0, R"({"rank": 0})"}}));
  EXPECT_TRUE(log_.All().empty());
}

TEST_F(RendezvousTest, GetBlocksUntilAnotherClientSetsTheKey) {
  StartServer();
  auto waiter = NewClient();
  auto setter = NewClient();
  ASSERT_TRUE(waiter && setter);
  std::thread later([&] {
    std::this_thread::sleep_for(milliseconds(200));
    EXPECT_TRUE(setter->Set("nccl/unique_id", "id-bytes").ok());
  });
  auto start = std::chrono::steady_clock::now();
  StatusOr<std::string> value = waiter->Get("nccl/unique_id", seconds(10));
  later.join();
  ASSERT_TRUE(value.ok()) << value.status().message();
  EXPECT_EQ(value.value(), "id-bytes");
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(150));
}

TEST_F(RendezvousTest, TheLauncherSetsKeysThatWakeWaitingRanksInOrder) {
  StartServer();
  auto waiter = NewClient();
  ASSERT_NE(waiter, nullptr);
  std::thread later([&] {
    std::this_thread::sleep_for(milliseconds(100));
    server_->Set("elastic/1/rank/a", "0 1 0 1 0 1 a");
    server_->Set("elastic/round", "1");
  });
  StatusOr<std::string> round = waiter->Get("elastic/round", seconds(10));
  later.join();
  ASSERT_TRUE(round.ok()) << round.status().message();
  EXPECT_EQ(round.value(), "1");
  // Set before the round, so already there when the round is.
  EXPECT_EQ(waiter->Get("elastic/1/rank/a", seconds(1)).value(), "0 1 0 1 0 1 a");
}

TEST_F(RendezvousTest, WaitBlocksUntilEveryKeyIsSet) {
  StartServer();
  auto waiter = NewClient();
  auto setter = NewClient();
  ASSERT_TRUE(waiter && setter);
  std::atomic<bool> done = false;
  std::thread waiting([&] {
    EXPECT_TRUE(waiter->Wait({"a", "b", "c"}, seconds(10)).ok());
    done = true;
  });
  ASSERT_TRUE(setter->Set("a", "1").ok());
  ASSERT_TRUE(setter->Set("b", "1").ok());
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_FALSE(done);
  EXPECT_EQ(setter->Add("c", 1).value(), 1);
  waiting.join();
  EXPECT_TRUE(done);
}

TEST_F(RendezvousTest, WaitTimeoutNamesTheMissingKeys) {
  StartServer();
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Set("present", "x").ok());
  Status status = client->Wait({"present", "gloo/1", "gloo/2"}, milliseconds(100));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            Where() + ": timed out after 100 ms waiting for 3 keys; 2 still missing: 'gloo/1', 'gloo/2'");
  // The connection stays usable after a timeout.
  EXPECT_TRUE(client->Set("after", "y").ok());
}

TEST_F(RendezvousTest, GetTimeoutNamesTheKey) {
  StartServer();
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  StatusOr<std::string> value = client->Get("gloo/3", seconds(1));
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().message(), Where() + ": timed out after 1 s waiting for key 'gloo/3'");
}

TEST_F(RendezvousTest, AddFromManyThreadsGivesTheExactTotal) {
  StartServer();
  constexpr int kThreads = 8;
  constexpr int kAddsPerThread = 200;
  auto shared = NewClient();
  ASSERT_NE(shared, nullptr);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Half the threads share one client (calls serialized by its mutex), half have their own.
      std::unique_ptr<RendezvousClient> own = t % 2 == 0 ? NewClient() : nullptr;
      RendezvousClient* client = own ? own.get() : shared.get();
      for (int i = 0; i < kAddsPerThread; ++i) EXPECT_TRUE(client->Add("total", 3).ok());
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(shared->Add("total", 0).value(), 3 * kThreads * kAddsPerThread);
}

TEST_F(RendezvousTest, ReportsAreCollectedByRank) {
  StartServer();
  std::vector<std::thread> ranks;
  ranks.reserve(4);
  for (int rank = 0; rank < 4; ++rank) {
    ranks.emplace_back([&, rank] {
      auto client = NewClient();
      ASSERT_NE(client, nullptr);
      EXPECT_TRUE(client->SendReport(rank, "{\"rank\": " + std::to_string(rank) + "}").ok());
    });
  }
  for (std::thread& rank : ranks) rank.join();
  std::map<int, std::string> reports = server_->Reports();
  ASSERT_EQ(reports.size(), 4u);
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(reports[rank], "{\"rank\": " + std::to_string(rank) + "}");
  auto client = NewClient();
  EXPECT_FALSE(client->SendReport(-1, "{}").ok());
}

TEST_F(RendezvousTest, TheLauncherReadsTheKeysUnderAPrefixAsTheyAreNow) {
  StartServer();
  EXPECT_TRUE(server_->ValuesWithPrefix("hvdrun/exit/").empty());
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Set("hvdrun/exit/1", "one").ok());
  ASSERT_TRUE(client->Set("hvdrun/exit/10", std::string("t\0en", 4)).ok());
  ASSERT_TRUE(client->Set("hvdrun/exit", "not under the prefix").ok());
  ASSERT_TRUE(client->Set("hvdrun/exiT/2", "other case").ok());
  ASSERT_TRUE(client->Set("hvdrun/started/1", "123").ok());
  std::map<std::string, std::string> expected = {{"hvdrun/exit/1", "one"},
                                                 {"hvdrun/exit/10", std::string("t\0en", 4)}};
  EXPECT_EQ(server_->ValuesWithPrefix("hvdrun/exit/"), expected);
  ASSERT_TRUE(client->Delete("hvdrun/exit/1").ok());
  expected.erase("hvdrun/exit/1");
  EXPECT_EQ(server_->ValuesWithPrefix("hvdrun/exit/"), expected);
  EXPECT_EQ(server_->ValuesWithPrefix("").size(), 4u);
}

TEST_F(RendezvousTest, WrongSecretIsRefusedAndLoggedWithoutTheSecret) {
  StartServer();
  std::string wrong = NewJobSecret();
  auto client = RendezvousClient::Connect("127.0.0.1", server_->port(), wrong, seconds(5));
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().message(), Where() + ": authentication refused: wrong secret");
  std::string line = log_.WaitFor("wrong secret");
  EXPECT_EQ(line.rfind("hvdrun: rendezvous: refused 127.0.0.1:", 0), 0u) << line;
  EXPECT_NE(line.find(": wrong secret"), std::string::npos) << line;
  for (const std::string& logged : log_.All()) {
    EXPECT_EQ(logged.find(secret_), std::string::npos);
    EXPECT_EQ(logged.find(wrong), std::string::npos);
  }
  EXPECT_EQ(client.status().message().find(wrong), std::string::npos);
  // The real secret still works.
  EXPECT_NE(NewClient(), nullptr);
}

TEST_F(RendezvousTest, MalformedSecretIsRefusedLocally) {
  StartServer();
  auto client = RendezvousClient::Connect("127.0.0.1", server_->port(), "not-a-secret", seconds(1));
  ASSERT_FALSE(client.ok());
  EXPECT_NE(client.status().message().find("64 lower-case hexadecimal digits"), std::string::npos);
}

TEST_F(RendezvousTest, ClientWithoutProofIsDisconnectedAfterTheAuthTimeout) {
  RendezvousLimits limits;
  limits.auth_timeout = milliseconds(200);
  StartServer(limits);
  UniqueFd fd = RawConnect();
  EXPECT_TRUE(ClosedByService(fd.get()));
  std::string line = log_.WaitFor("no authentication within 200 ms");
  EXPECT_EQ(line.rfind("hvdrun: rendezvous: refused 127.0.0.1:", 0), 0u) << line;
}

TEST_F(RendezvousTest, NoOperationBeforeAuthentication) {
  StartServer();
  UniqueFd fd = RawConnect();
  ASSERT_TRUE(WriteAll(fd.get(), rendezvous::EncodeFrame(rendezvous::SetRequest{"k", "v"})));
  EXPECT_TRUE(ClosedByService(fd.get()));
  EXPECT_NE(log_.WaitFor("expected Proof, got SetRequest"), "");
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  EXPECT_FALSE(client->Get("k", milliseconds(10)).ok());
}

TEST_F(RendezvousTest, BadFramesCloseTheConnectionAreLoggedAndOthersAreStillServed) {
  StartServer();
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Set("k", "v").ok());

  // Garbage before authentication: text read as a length is far above the handshake limit.
  UniqueFd garbage = RawConnect();
  ASSERT_TRUE(WriteAll(garbage.get(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_TRUE(ClosedByService(garbage.get()));
  EXPECT_NE(log_.WaitFor("refused 127.0.0.1:"), "");

  // An oversized frame after authentication.
  UniqueFd oversized = RawAuthenticated();
  ByteWriter header;
  header.U32(rendezvous::kMaxFrameBytes + 1);
  ASSERT_TRUE(WriteAll(oversized.get(), header.data()));
  EXPECT_TRUE(ClosedByService(oversized.get()));
  EXPECT_NE(log_.WaitFor("exceeds the limit of " + std::to_string(rendezvous::kMaxFrameBytes)), "");

  // An unknown message type after authentication.
  UniqueFd unknown = RawAuthenticated();
  ASSERT_TRUE(WriteAll(unknown.get(), std::string("\0\0\0\1\x63", 5)));
  EXPECT_TRUE(ClosedByService(unknown.get()));
  EXPECT_NE(log_.WaitFor("protocol error: unknown message type 99"), "");

  // A truncated frame: the peer ends the connection in the middle of it.
  UniqueFd truncated = RawAuthenticated();
  std::string frame = rendezvous::EncodeFrame(rendezvous::SetRequest{"k", "value"});
  ASSERT_TRUE(WriteAll(truncated.get(), frame.substr(0, frame.size() - 3)));
  shutdown(truncated.get(), SHUT_WR);
  EXPECT_TRUE(ClosedByService(truncated.get()));
  EXPECT_NE(log_.WaitFor("connection ended inside a frame"), "");

  // A response message sent as a request.
  UniqueFd wrong_way = RawAuthenticated();
  ASSERT_TRUE(WriteAll(wrong_way.get(), rendezvous::EncodeFrame(rendezvous::OkResponse{})));
  EXPECT_TRUE(ClosedByService(wrong_way.get()));
  EXPECT_NE(log_.WaitFor("unexpected OkResponse"), "");

  for (const std::string& line : log_.All()) {
    EXPECT_EQ(line.rfind("hvdrun: rendezvous: ", 0), 0u) << line;
    EXPECT_EQ(line.find(secret_), std::string::npos) << line;
  }
  EXPECT_EQ(client->Get("k", seconds(1)).value(), "v");
  EXPECT_NE(NewClient(), nullptr);
}

TEST_F(RendezvousTest, LimitsGiveClearErrors) {
  RendezvousLimits limits;
  limits.max_key_bytes = 16;
  limits.max_value_bytes = 100;
  limits.max_report_bytes = 50;
  limits.max_keys = 3;
  StartServer(limits);
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  Status long_key = client->Set(std::string(17, 'k'), "v");
  EXPECT_EQ(long_key.message(),
            Where() + ": key '" + std::string(17, 'k') + "' of 17 bytes exceeds the limit of 16 bytes");
  Status big_value = client->Set("k", std::string(101, 'v'));
  EXPECT_EQ(big_value.message(),
            Where() + ": value for key 'k', of 101 bytes exceeds the limit of 100 bytes");
  Status big_report = client->SendReport(1, std::string(51, ' '));
  EXPECT_EQ(big_report.message(), Where() + ": report of rank 1, of 51 bytes exceeds the limit of 50 bytes");
  EXPECT_FALSE(client->Get(std::string(17, 'k'), seconds(1)).ok());
  EXPECT_FALSE(client->Wait({"ok", std::string(17, 'k')}, seconds(1)).ok());
  ASSERT_TRUE(client->Set("a", "1").ok());
  ASSERT_TRUE(client->Set("b", "1").ok());
  ASSERT_TRUE(client->Set("c", "1").ok());
  Status fourth = client->Set("d", "1");
  EXPECT_EQ(fourth.message(), Where() + ": cannot add key 'd': the store holds 3 keys, its limit");
  EXPECT_TRUE(client->Set("a", "2").ok());  // replacing a key is not adding one
  // Errors answer the request; the connection stays.
  EXPECT_EQ(client->Get("a", seconds(1)).value(), "2");
  EXPECT_TRUE(log_.All().empty());
}

TEST_F(RendezvousTest, WildcardAndNonAddressesAreRefused) {
  for (const char* address : {"0.0.0.0", "::"}) {
    auto server = RendezvousServer::Start(address, secret_, nullptr);
    ASSERT_FALSE(server.ok()) << address;
    EXPECT_NE(server.status().message().find("refusing to listen on the wildcard address"), std::string::npos)
        << server.status().message();
  }
  auto named = RendezvousServer::Start("localhost", secret_, nullptr);
  ASSERT_FALSE(named.ok());
  EXPECT_NE(named.status().message().find("not an IP address"), std::string::npos);
  auto bad_secret = RendezvousServer::Start("127.0.0.1", "short", nullptr);
  ASSERT_FALSE(bad_secret.ok());
  EXPECT_EQ(bad_secret.status().message(),
            "rendezvous: the job secret must be 64 lower-case hexadecimal digits");
}

TEST_F(RendezvousTest, DestructionFailsWaitingClientsCleanly) {
  StartServer();
  auto waiter = NewClient();
  auto other = NewClient();
  ASSERT_TRUE(waiter && other);
  Status result;
  std::thread waiting([&] { result = waiter->Wait({"never"}, seconds(30)); });
  std::this_thread::sleep_for(milliseconds(200));
  std::string where = Where();
  auto start = std::chrono::steady_clock::now();
  server_.reset();
  waiting.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.message(), where + ": the rendezvous service stopped (hvdrun is shutting down)");
  Status after = other->Set("k", "v");
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.message().rfind(where + ": connection lost: ", 0), 0u) << after.message();
  // A broken connection stays broken.
  EXPECT_EQ(other->Delete("k").message(), after.message());
}

TEST_F(RendezvousTest, IdleConnectionIsClosed) {
  StartServerClosingIdleAfter(milliseconds(200));
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  // Waiting in get is not idleness: nothing is closed while the get waits longer than the limit.
  std::thread later([&] {
    std::this_thread::sleep_for(milliseconds(300));
    auto setter = NewClient();
    EXPECT_TRUE(setter && setter->Set("late", "x").ok());
  });
  EXPECT_TRUE(client->Get("late", seconds(5)).ok());
  later.join();
  EXPECT_EQ(log_.All(), std::vector<std::string>{});
  // A quiet connection is closed and logged.
  UniqueFd quiet = RawAuthenticated();
  EXPECT_TRUE(ClosedByService(quiet.get()));
  std::string line = log_.WaitFor("idle for 200 ms");
  EXPECT_EQ(line.rfind("hvdrun: rendezvous: closed 127.0.0.1:", 0), 0u) << line;
}

// A rank connects at start, trains for hours, then sends its report: the service closes its quiet
// connection after 10 minutes, and the client reconnects and authenticates again before its next
// request. Add and compare-and-set, which must not run twice, are among the requests that follow.
TEST_F(RendezvousTest, ByDefaultAQuietConnectionIsClosedAfterTenMinutesAndTheClientReconnects) {
  EXPECT_EQ(RendezvousLimits().idle_timeout, std::chrono::minutes(10));
  StartServerClosingIdleAfter(milliseconds(200));
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Set("early", "x").ok());
  ASSERT_NE(log_.WaitFor("idle for 200 ms"), "");
  std::this_thread::sleep_for(milliseconds(100));  // the line is logged just before the close
  StatusOr<int64_t> sum = client->Add("counter", 2);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum.value(), 2);

  // Idle again: each of the other requests reconnects in its turn.
  auto idle_again = [&](size_t closed_lines) {
    for (int i = 0; i < 100 && log_.All().size() < closed_lines; ++i) {
      std::this_thread::sleep_for(milliseconds(50));
    }
    ASSERT_EQ(log_.All().size(), closed_lines);
    std::this_thread::sleep_for(milliseconds(100));
  };
  idle_again(2);
  EXPECT_EQ(ValueOr(client->CompareAndSet("leader", "", "rank 0"), "failed"), "rank 0");
  idle_again(3);
  EXPECT_TRUE(client->Set("late", "y").ok());
  idle_again(4);
  EXPECT_EQ(ValueOr(client->Get("early", seconds(1)), "failed"), "x");
  idle_again(5);
  EXPECT_TRUE(client->Wait({"early", "late"}, seconds(1)).ok());
  idle_again(6);
  EXPECT_TRUE(client->Delete("late").ok());
  idle_again(7);
  Status report = client->SendReport(0, R"({"rank": 0})");
  EXPECT_TRUE(report.ok()) << report.message();
  EXPECT_EQ(server_->Reports(), (std::map<int, std::string>{{0, R"({"rank": 0})"}}));
  // Each request ran once.
  EXPECT_EQ(ValueOr(client->Add("counter", 0), -1), 2);
  EXPECT_EQ(ValueOr(client->Get("leader", seconds(1)), "failed"), "rank 0");
  // Only the closes were logged: every reconnection authenticated.
  for (const std::string& line : log_.All()) {
    EXPECT_NE(line.find(": idle for 200 ms"), std::string::npos) << line;
  }
}

TEST_F(RendezvousTest, AReconnectionToAStoppedServiceFailsClearly) {
  StartServerClosingIdleAfter(milliseconds(200));
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  ASSERT_NE(log_.WaitFor("idle for 200 ms"), "");
  std::string where = Where();
  server_.reset();
  auto start = std::chrono::steady_clock::now();
  Status report = client->SendReport(0, "{}");
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5)) << "a refusal is not retried";
  EXPECT_EQ(report.message(),
            where +
                ": connection lost: the service closed the connection; reconnecting failed: "
                "connect: Connection refused (is hvdrun still running?)");
  // A broken connection stays broken.
  EXPECT_EQ(client->Set("k", "v").message(), report.message());
}

TEST_F(RendezvousTest, ConnectionsAboveTheLimitAreRefused) {
  RendezvousLimits limits;
  limits.max_connections = 2;
  StartServer(limits);
  auto first = NewClient();
  auto second = NewClient();
  ASSERT_TRUE(first && second);
  auto third = RendezvousClient::Connect("127.0.0.1", server_->port(), secret_, seconds(1));
  EXPECT_FALSE(third.ok());
  EXPECT_NE(log_.WaitFor("too many connections (limit 2)"), "");
  first.reset();
  // The closed connection's slot is freed once the service notices.
  std::unique_ptr<RendezvousClient> again;
  for (int attempt = 0; attempt < 50 && !again; ++attempt) {
    auto client = RendezvousClient::Connect("127.0.0.1", server_->port(), secret_, seconds(1));
    if (client.ok()) {
      again = std::move(client).value();
    } else {
      std::this_thread::sleep_for(milliseconds(20));
    }
  }
  EXPECT_NE(again, nullptr);
}

TEST_F(RendezvousTest, ConnectRetriesUntilTheTimeout) {
  // A port with nothing listening: every attempt is refused until the timeout.
  uint16_t port = 0;
  UniqueFd probe = testing::BindLoopback(&port);
  auto start = std::chrono::steady_clock::now();
  auto client = RendezvousClient::Connect("127.0.0.1", port, secret_, milliseconds(300));
  ASSERT_FALSE(client.ok());
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(200));
  EXPECT_EQ(client.status().message(), "rendezvous 127.0.0.1:" + std::to_string(port) +
                                           ": connect: cannot connect within 300 ms: Connection refused "
                                           "(is hvdrun still running?)");
}

}  // namespace
}  // namespace hvdrun
