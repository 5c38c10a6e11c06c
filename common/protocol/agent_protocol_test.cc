#include "common/protocol/agent_protocol.h"

#include <gtest/gtest.h>

#include "common/protocol/byte_codec.h"
#include "common/protocol/framing_conformance.h"

namespace hvdrun::protocol {
namespace {

// A stuck rank's progress with two flight records, one of them still in the backend.
RankProgress SampleProgress() {
  RankProgress progress{.rank = 3,
                        .pid = 777,
                        .state = ProcessState::kSleeping,
                        .state_since_unix_ms = 1764400000000,
                        .board_read = true,
                        .completed = 812,
                        .failed = 1,
                        .last_completed_name = "grad.layer4.1.conv2",
                        .last_completed_unix_ms = 1764400001000,
                        .pending = 2,
                        .oldest_pending_name = "grad.fc",
                        .oldest_pending_since_unix_ms = -5,
                        .in_backend = true,
                        .backend_name = "grad.fc",
                        .backend_op = "allreduce",
                        .backend_bytes = 0xffffffffffULL,
                        .backend_since_unix_ms = 1764400002000,
                        .process_set = 0};
  progress.records = {
      FlightRecord{811, "grad.layer4.1.conv2", "allreduce", 9437184, 0, CollectivePhase::kDone, 1, 2, 3, 4},
      FlightRecord{812, std::string("n\0\xff", 3), "broadcast", 4, 2, CollectivePhase::kInBackend, 5, 6, 7,
                   0},
  };
  return progress;
}

std::vector<Message> SampleMessages() {
  RankLaunch rank{3, {"python3", "-c", "print('a b')", ""}, {"HVDRUN_RANK=3", "EMPTY="}, "/tmp/work dir"};
  std::string binary("\0\xff\n\x80 line", 9);
  return {
      Hello{kProtocolVersion, "0.1.0", 1000, 30000},
      Hello{kProtocolVersion, "0.1.0", 1000, 0, true},
      AgentHello{kProtocolVersion, "0.1.0", "server1", 4242, 29500},
      AgentHello{kProtocolVersion,
                 "0.1.0",
                 "server1",
                 4242,
                 29500,
                 {{"kernel", "Linux 6.1.0 x86_64", "uname"}, {"gpus", "none", ""}},
                 {{"lo", "127.0.0.1"}, {"eth0", "10.0.0.2"}}},
      Launch{1000, {rank, RankLaunch{4, {"true"}, {}, "/"}}},
      Launch{0, {}},
      RankStarted{3, 12345},
      RankOutput{3, OutputStream::kStderr, false, binary},
      RankOutput{0, OutputStream::kStdout, true, ""},
      RankExited{3, 0, 11, SpawnError::kNone, ""},
      RankExited{1, 127, 0, SpawnError::kNotFound, "command not found: './x'"},
      Heartbeat{},
      Terminate{},
      Terminate{true},
      AgentError{"cannot watch child processes"},
      RankProgress{1, 4242, ProcessState::kStopped, 19, 1764400000123},
      SampleProgress(),
      ProgressRequest{},
      ProgressRequest{true},
  };
}

StatusOr<std::optional<Message>> DecodeOne(std::string_view bytes) {
  FrameDecoder decoder;
  decoder.Append(bytes);
  return decoder.Next();
}

// Where a Hello or AgentHello frame can be cut and still be a valid message of an earlier protocol
// version: before the fields protocol 3 appended (AgentHello's interfaces), and before those
// protocol 2 appended too (want_facts, facts). See VersionOneHellosDecodeSoTheVersionsCanBeCompared.
std::vector<size_t> HelloCuts(const Message& message) {
  if (std::holds_alternative<Hello>(message)) return {1};
  if (const auto* hello = std::get_if<AgentHello>(&message)) {
    size_t version_three = 4;
    for (const InterfaceAddress& interface : hello->interfaces) {
      version_three += 8 + interface.name.size() + interface.address.size();
    }
    size_t version_two = 4;
    for (const HostFact& fact : hello->facts) {
      version_two += 12 + fact.key.size() + fact.value.size() + fact.source.size();
    }
    return {version_three, version_three + version_two};
  }
  return {};
}

struct AgentProtocolSamples {
  using Message = protocol::Message;
  using FrameDecoder = protocol::FrameDecoder;
  static std::vector<Message> Samples() { return SampleMessages(); }
  static std::string EncodeFrame(const Message& message) { return protocol::EncodeFrame(message); }
  static std::string_view MessageName(const Message& message) { return protocol::MessageName(message); }
  static bool Extensible(const Message& message) {
    return std::holds_alternative<Hello>(message) || std::holds_alternative<AgentHello>(message);
  }
  static std::vector<size_t> EarlierVersionCuts(const Message& message) { return HelloCuts(message); }
};

INSTANTIATE_TYPED_TEST_SUITE_P(AgentProtocol, FramedProtocol, AgentProtocolSamples);

// The type bytes docs/protocol.md gives: 1 to 11, in the order of the Message variant.
TEST(AgentProtocol, MessagesCarryTheirDocumentedTypes) {
  for (const Message& message : SampleMessages()) {
    EXPECT_EQ(static_cast<size_t>(EncodeFrame(message)[4]), message.index() + 1) << MessageName(message);
  }
  EXPECT_EQ(MessageName(Hello{}), "Hello");
  EXPECT_EQ(MessageName(AgentError{}), "AgentError");
}

TEST(AgentProtocol, HellosFromLaterVersionsStillDecode) {
  AgentHello hello{kProtocolVersion + 1, "9.0.0", "server1", 7, 0};
  std::string frame = EncodeFrame(hello) + "new field";
  frame[3] = static_cast<char>(frame[3] + 9);  // the length covers the appended bytes
  StatusOr<std::optional<Message>> decoded = DecodeOne(frame);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded.value(), Message(hello));
}

// The fields of an AgentHello that every protocol version has (a version-1 AgentHello is just these).
ByteWriter AgentHelloFirstFields(uint32_t protocol_version) {
  ByteWriter fields;
  fields.Bytes(kMagic);
  fields.U32(protocol_version);
  fields.Bytes("0.1.0");
  fields.Bytes("server1");
  fields.I32(7);
  fields.U16(29500);
  return fields;
}

TEST(AgentProtocol, VersionOneHellosDecodeSoTheVersionsCanBeCompared) {
  // Protocol 1's Hello and AgentHello: protocol 2 appended want_facts and facts to them.
  ByteWriter hello;
  hello.Bytes(kMagic);
  hello.U32(1);
  hello.Bytes("0.1.0");
  hello.U32(1000);
  hello.U32(30000);
  StatusOr<Message> decoded = DecodeMessage(static_cast<uint8_t>(MessageType::kHello), hello.data());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded.value(), Message(Hello{1, "0.1.0", 1000, 30000, false}));

  decoded = DecodeMessage(static_cast<uint8_t>(MessageType::kAgentHello), AgentHelloFirstFields(1).data());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded.value(), Message(AgentHello{1, "0.1.0", "server1", 7, 29500}));
}

TEST(AgentProtocol, AFactCountBeyondTheFrameIsMalformed) {
  ByteWriter fields = AgentHelloFirstFields(kProtocolVersion);
  fields.U32(1000);  // facts, but no bytes for them
  StatusOr<Message> decoded = DecodeMessage(static_cast<uint8_t>(MessageType::kAgentHello), fields.data());
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "malformed AgentHello message");
}

TEST(AgentProtocol, AnInterfaceCountBeyondTheFrameIsMalformed) {
  ByteWriter fields = AgentHelloFirstFields(kProtocolVersion);
  fields.U32(0);     // no facts
  fields.U32(1000);  // interfaces, but no bytes for them
  StatusOr<Message> decoded = DecodeMessage(static_cast<uint8_t>(MessageType::kAgentHello), fields.data());
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "malformed AgentHello message");
}

TEST(AgentProtocol, FramesAreLimitedTo16MiB) {
  ByteWriter header;
  header.U32(kMaxFrameBytes + 1);
  StatusOr<std::optional<Message>> decoded = DecodeOne(header.Take());
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "frame of 16777217 bytes exceeds the limit of 16777216");
}

TEST(AgentProtocol, EncodedSizeIsWhatEachRankAddsToALaunchFrame) {
  // A launcher sums these to keep a host's Launch within kMaxFrameBytes before it sends it.
  const RankLaunch first{3, {"python3", "-c", "print('a b')"}, {"HVDRUN_RANK=3", "EMPTY="}, "/tmp/work dir"};
  const RankLaunch second{4, {"true"}, {}, ""};
  const size_t empty = EncodeFrame(Launch{1000, {}}).size();
  EXPECT_EQ(EncodeFrame(Launch{1000, {first}}).size(), empty + EncodedSize(first));
  EXPECT_EQ(EncodeFrame(Launch{1000, {first, second}}).size(),
            empty + EncodedSize(first) + EncodedSize(second));
}

TEST(AgentProtocol, HelloWithWrongMagicIsRefused) {
  ByteWriter fields;
  fields.Bytes("some-other-protocol");
  fields.U32(kProtocolVersion);
  fields.Bytes("0.1.0");
  fields.U32(0);
  fields.U32(0);
  StatusOr<Message> decoded = DecodeMessage(static_cast<uint8_t>(MessageType::kHello), fields.data());
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "malformed Hello message");
}

TEST(AgentProtocol, InvalidEnumValuesAreRefused) {
  std::string output = EncodeFrame(RankOutput{0, OutputStream::kStdout, true, "x"});
  output[9] = 7;  // stream
  EXPECT_FALSE(DecodeOne(output).ok());
  output = EncodeFrame(RankOutput{0, OutputStream::kStdout, true, "x"});
  output[10] = 2;  // newline flag
  EXPECT_FALSE(DecodeOne(output).ok());
  std::string exited = EncodeFrame(RankExited{0, 1, 0, SpawnError::kNone, ""});
  exited[17] = 42;  // spawn error
  EXPECT_FALSE(DecodeOne(exited).ok());
}

TEST(AgentProtocol, InvalidProgressEnumsAreRefused) {
  // RankProgress: rank, pid (8 bytes), then the state byte.
  std::string progress = EncodeFrame(RankProgress{1, 2, ProcessState::kRunning});
  progress[5 + 8] = 8;
  EXPECT_FALSE(DecodeOne(progress).ok());
  // A record's phase: after its sequence, two strings, bytes and process set.
  RankProgress with_record{.records = {FlightRecord{1, "a", "b", 4, 0, CollectivePhase::kFailed}}};
  std::string frame = EncodeFrame(with_record);
  const size_t record_start = frame.size() - (8 + 5 + 5 + 8 + 4 + 1 + 32);
  const size_t phase = record_start + 8 + 5 + 5 + 8 + 4;
  ASSERT_EQ(static_cast<uint8_t>(frame[phase]), 5);
  for (int bad : {0, 6}) {
    frame[phase] = static_cast<char>(bad);
    EXPECT_FALSE(DecodeOne(frame).ok());
  }
  frame[phase] = 1;
  EXPECT_TRUE(DecodeOne(frame).ok());
}

TEST(AgentProtocol, ARecordCountBeyondTheFrameIsMalformed) {
  std::string fields = EncodeFrame(RankProgress{}).substr(5);
  fields.resize(fields.size() - 4);
  ByteWriter count;
  count.U32(2);  // two records, but no bytes for them
  fields += count.data();
  StatusOr<Message> decoded = DecodeMessage(static_cast<uint8_t>(MessageType::kRankProgress), fields);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "malformed RankProgress message");
}

TEST(AgentProtocol, HugeListCountsDoNotAllocate) {
  ByteWriter fields;
  fields.U32(1000);
  fields.U32(0xffffffff);  // rank count far beyond the bytes present
  StatusOr<Message> decoded = DecodeMessage(static_cast<uint8_t>(MessageType::kLaunch), fields.data());
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "malformed Launch message");
}

}  // namespace
}  // namespace hvdrun::protocol
