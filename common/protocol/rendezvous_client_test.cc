// The client's reconnection rule, against a scripted service that breaks connections where the real
// one (launcher/rendezvous/rendezvous_server_test.cc) never does: after reading a request.
#include "common/protocol/rendezvous_client.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <mutex>
#include <optional>
#include <thread>

#include "common/process/file_descriptor.h"
#include "common/protocol/job_secret.h"
#include "common/protocol/rendezvous_protocol.h"
#include "common/protocol/rendezvous_test_peer.h"

namespace hvdrun {
namespace {

using std::chrono::seconds;

// A stand-in for the rendezvous service, serving one connection at a time on a thread of its own:
// it authenticates a connection as the service does, reads its first request and then does what
// the script says for that connection (the script's last step repeats). Recorded counts are read
// after Stop().
class ScriptedService {
 public:
  enum class Step {
    kAnswer,                // answers every request until the client closes
    kCloseWithoutAnswer,    // closes after reading the request
    kCloseInsideTheAnswer,  // sends the first bytes of the answer, then closes
  };

  ScriptedService(std::string secret_hex, std::vector<Step> script)
      : secret_hex_(std::move(secret_hex)), script_(std::move(script)) {
    listener_ = testing::BindLoopback(&port_);
    EXPECT_EQ(listen(listener_.get(), 8), 0);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedService() { Stop(); }
  ScriptedService(const ScriptedService&) = delete;
  ScriptedService& operator=(const ScriptedService&) = delete;

  uint16_t port() const { return port_; }
  std::string Where() const { return "rendezvous 127.0.0.1:" + std::to_string(port_); }

  void Stop() {
    if (!thread_.joinable()) return;
    shutdown(listener_.get(), SHUT_RDWR);  // wakes accept()
    thread_.join();
  }
  // Connections accepted, and the requests read, by message name.
  int connections() const { return connections_; }
  const std::vector<std::string>& requests() const { return requests_; }

 private:
  void Serve() {
    while (true) {
      UniqueFd fd(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!fd.valid()) return;
      Step step = script_[std::min<size_t>(connections_, script_.size() - 1)];
      ++connections_;
      Converse(fd.get(), step);
    }
  }

  void Converse(int fd, Step step) {
    rendezvous::FrameDecoder decoder;
    std::string nonce(kJobSecretBytes, 'n');
    if (!WriteAll(fd, rendezvous::EncodeFrame(rendezvous::Challenge{rendezvous::kProtocolVersion, nonce}))) {
      return;
    }
    if (!testing::ReceiveMessage(fd, decoder)) return;  // the proof, taken as right
    std::string proof = HmacSha256Hex(secret_hex_, nonce + std::string(rendezvous::kServerProofSuffix));
    if (!WriteAll(fd, rendezvous::EncodeFrame(rendezvous::Welcome{proof}))) return;
    while (std::optional<rendezvous::Message> request = testing::ReceiveMessage(fd, decoder)) {
      requests_.emplace_back(rendezvous::MessageName(*request));
      std::string answer = rendezvous::EncodeFrame(AnswerTo(*request));
      if (step == Step::kCloseWithoutAnswer) return;
      if (step == Step::kCloseInsideTheAnswer) {
        WriteAll(fd, answer.substr(0, 3));
        return;
      }
      if (!WriteAll(fd, answer)) return;
    }
  }

  static rendezvous::Message AnswerTo(const rendezvous::Message& request) {
    if (std::holds_alternative<rendezvous::AddRequest>(request)) return rendezvous::IntResponse{1};
    if (std::holds_alternative<rendezvous::GetRequest>(request) ||
        std::holds_alternative<rendezvous::CompareAndSetRequest>(request)) {
      return rendezvous::ValueResponse{"value"};
    }
    return rendezvous::OkResponse{};
  }

  const std::string secret_hex_;
  const std::vector<Step> script_;
  UniqueFd listener_;
  uint16_t port_ = 0;
  std::thread thread_;
  int connections_ = 0;                // written by thread_ only
  std::vector<std::string> requests_;  // written by thread_ only
};

using Step = ScriptedService::Step;

class RendezvousClientTest : public ::testing::Test {
 protected:
  std::unique_ptr<RendezvousClient> Connect(const ScriptedService& service) {
    auto client = RendezvousClient::Connect("127.0.0.1", service.port(), secret_, seconds(5));
    EXPECT_TRUE(client.ok()) << client.status().message();
    return client.ok() ? std::move(client).value() : nullptr;
  }

  std::string secret_ = NewJobSecret();
};

// A request that is safe to repeat is sent again on a new connection when the service closes the
// connection before answering (a close racing the request, the service's idle timer fired first).
TEST_F(RendezvousClientTest, ASetIsSentAgainWhenTheServiceClosesBeforeAnswering) {
  ScriptedService service(secret_, {Step::kCloseWithoutAnswer, Step::kAnswer});
  auto client = Connect(service);
  ASSERT_NE(client, nullptr);
  Status set = client->Set("k", "v");
  EXPECT_TRUE(set.ok()) << set.message();
  EXPECT_TRUE(client->SendReport(0, "{}").ok());
  client.reset();
  service.Stop();
  EXPECT_EQ(service.connections(), 2);
  EXPECT_EQ(service.requests(), (std::vector<std::string>{"SetRequest", "SetRequest", "ReportRequest"}));
}

// Add and compare-and-set may have been applied when the connection went: never sent twice.
TEST_F(RendezvousClientTest, AnAddIsNotSentAgainWhenTheServiceClosesBeforeAnswering) {
  ScriptedService service(secret_, {Step::kCloseWithoutAnswer, Step::kAnswer});
  auto client = Connect(service);
  ASSERT_NE(client, nullptr);
  StatusOr<int64_t> sum = client->Add("counter", 1);
  ASSERT_FALSE(sum.ok());
  EXPECT_EQ(sum.status().message(), service.Where() + ": connection lost: the service closed the connection");
  EXPECT_EQ(client->Set("k", "v").message(), sum.status().message()) << "a broken connection stays broken";
  client.reset();
  service.Stop();
  EXPECT_EQ(service.connections(), 1);
  EXPECT_EQ(service.requests(), std::vector<std::string>{"AddRequest"});
}

TEST_F(RendezvousClientTest, ACompareAndSetIsNotSentAgainWhenTheServiceClosesBeforeAnswering) {
  ScriptedService service(secret_, {Step::kCloseWithoutAnswer, Step::kAnswer});
  auto client = Connect(service);
  ASSERT_NE(client, nullptr);
  EXPECT_FALSE(client->CompareAndSet("leader", "", "rank 0").ok());
  client.reset();
  service.Stop();
  EXPECT_EQ(service.connections(), 1);
}

TEST_F(RendezvousClientTest, AConnectionThatEndsInsideAnAnswerIsNotReopened) {
  ScriptedService service(secret_, {Step::kCloseInsideTheAnswer, Step::kAnswer});
  auto client = Connect(service);
  ASSERT_NE(client, nullptr);
  Status set = client->Set("k", "v");
  EXPECT_EQ(set.message(), service.Where() + ": connection lost: the service closed the connection");
  client.reset();
  service.Stop();
  EXPECT_EQ(service.connections(), 1);
}

TEST_F(RendezvousClientTest, ARequestIsSentAgainOnlyOnce) {
  ScriptedService service(secret_, {Step::kCloseWithoutAnswer});
  auto client = Connect(service);
  ASSERT_NE(client, nullptr);
  Status set = client->Set("k", "v");
  EXPECT_EQ(set.message(),
            service.Where() + ": connection lost: the service closed the connection (after reconnecting)");
  client.reset();
  service.Stop();
  EXPECT_EQ(service.connections(), 2);
  EXPECT_EQ(service.requests(), (std::vector<std::string>{"SetRequest", "SetRequest"}));
}

}  // namespace
}  // namespace hvdrun
