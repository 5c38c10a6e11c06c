#include "common/agent_protocol.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/byte_codec.h"

namespace hvdrun::protocol {
namespace {

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
  };
}

StatusOr<std::optional<Message>> DecodeOne(std::string_view bytes) {
  FrameDecoder decoder;
  decoder.Append(bytes);
  return decoder.Next();
}

TEST(AgentProtocol, EveryMessageRoundTrips) {
  for (const Message& message : SampleMessages()) {
    StatusOr<std::optional<Message>> decoded = DecodeOne(EncodeFrame(message));
    ASSERT_TRUE(decoded.ok()) << MessageName(message) << ": " << decoded.status().message();
    ASSERT_TRUE(decoded.value().has_value()) << MessageName(message);
    EXPECT_EQ(*decoded.value(), message) << MessageName(message);
  }
}

TEST(AgentProtocol, FramesArrivingByteByByteDecodeInOrder) {
  std::string stream;
  for (const Message& message : SampleMessages()) stream += EncodeFrame(message);
  FrameDecoder decoder;
  std::vector<Message> decoded;
  for (char byte : stream) {
    decoder.Append(std::string_view(&byte, 1));
    while (true) {
      StatusOr<std::optional<Message>> next = decoder.Next();
      ASSERT_TRUE(next.ok()) << next.status().message();
      if (!next.value()) break;
      decoded.push_back(std::move(*next.value()));
    }
  }
  EXPECT_EQ(decoded, SampleMessages());
  EXPECT_TRUE(decoder.pending().empty());
}

TEST(AgentProtocol, EveryTruncationWaitsForMoreBytes) {
  for (const Message& message : SampleMessages()) {
    std::string frame = EncodeFrame(message);
    for (size_t length = 0; length < frame.size(); ++length) {
      StatusOr<std::optional<Message>> decoded = DecodeOne(frame.substr(0, length));
      ASSERT_TRUE(decoded.ok()) << MessageName(message) << " cut at " << length;
      EXPECT_FALSE(decoded.value().has_value()) << MessageName(message) << " cut at " << length;
    }
  }
}

// A frame whose length claims fewer bytes than the message needs: the message is malformed.
// Where a Hello or AgentHello frame can be cut and still be a valid message of an earlier protocol
// version: before the fields protocol 3 appended (AgentHello's interfaces), and before those
// protocol 2 appended too (want_facts, facts). See VersionOneHellosDecodeSoTheVersionsCanBeCompared.
std::vector<size_t> EarlierVersionCuts(const Message& message) {
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

TEST(AgentProtocol, ShortenedFieldsAreMalformed) {
  for (const Message& message : SampleMessages()) {
    std::string frame = EncodeFrame(message);
    for (size_t cut = 1; cut + 5 <= frame.size(); ++cut) {
      std::vector<size_t> earlier = EarlierVersionCuts(message);
      if (std::find(earlier.begin(), earlier.end(), cut) != earlier.end()) continue;
      std::string body = frame.substr(4, frame.size() - 4 - cut);
      if (body.empty()) continue;
      ByteWriter header;
      header.U32(static_cast<uint32_t>(body.size()));
      StatusOr<std::optional<Message>> decoded = DecodeOne(header.Take() + body);
      ASSERT_FALSE(decoded.ok()) << MessageName(message) << " shortened by " << cut;
      EXPECT_NE(decoded.status().message().find("malformed"), std::string::npos)
          << decoded.status().message();
    }
  }
}

TEST(AgentProtocol, ExtraBytesAreRefused) {
  std::string frame = EncodeFrame(RankStarted{1, 2});
  frame.push_back('x');
  frame[3] = static_cast<char>(frame[3] + 1);  // the length covers the extra byte
  StatusOr<std::optional<Message>> decoded = DecodeOne(frame);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "RankStarted message has 1 extra bytes");
}

TEST(AgentProtocol, HellosFromLaterVersionsStillDecode) {
  AgentHello hello{kProtocolVersion + 1, "9.0.0", "server1", 7, 0};
  std::string frame = EncodeFrame(hello) + "new field";
  frame[3] = static_cast<char>(frame[3] + 9);  // the length covers the appended bytes
  StatusOr<std::optional<Message>> decoded = DecodeOne(frame);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded.value(), Message(hello));
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

  ByteWriter agent_hello;
  agent_hello.Bytes(kMagic);
  agent_hello.U32(1);
  agent_hello.Bytes("0.1.0");
  agent_hello.Bytes("server1");
  agent_hello.I32(7);
  agent_hello.U16(29500);
  decoded = DecodeMessage(static_cast<uint8_t>(MessageType::kAgentHello), agent_hello.data());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded.value(), Message(AgentHello{1, "0.1.0", "server1", 7, 29500}));
}

TEST(AgentProtocol, AnInterfaceCountBeyondTheFrameIsMalformed) {
  ByteWriter fields;
  fields.Bytes(kMagic);
  fields.U32(kProtocolVersion);
  fields.Bytes("0.1.0");
  fields.Bytes("server1");
  fields.I32(7);
  fields.U16(29500);
  fields.U32(0);     // no facts
  fields.U32(1000);  // interfaces, but no bytes for them
  StatusOr<Message> decoded = DecodeMessage(static_cast<uint8_t>(MessageType::kAgentHello), fields.data());
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "malformed AgentHello message");
}

TEST(AgentProtocol, AFactCountBeyondTheFrameIsMalformed) {
  ByteWriter fields;
  fields.Bytes(kMagic);
  fields.U32(kProtocolVersion);
  fields.Bytes("0.1.0");
  fields.Bytes("server1");
  fields.I32(7);
  fields.U16(0);
  fields.U32(1000);
  StatusOr<Message> decoded = DecodeMessage(static_cast<uint8_t>(MessageType::kAgentHello), fields.data());
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "malformed AgentHello message");
}

TEST(AgentProtocol, OversizedFrameIsRefusedBeforeItArrives) {
  ByteWriter header;
  header.U32(kMaxFrameBytes + 1);
  StatusOr<std::optional<Message>> decoded = DecodeOne(header.Take());
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "frame of 16777217 bytes exceeds the limit of 16777216");
}

TEST(AgentProtocol, EmptyFrameIsRefused) {
  StatusOr<std::optional<Message>> decoded = DecodeOne(std::string(4, '\0'));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "empty frame (length 0)");
}

TEST(AgentProtocol, UnknownTypeIsRefused) {
  StatusOr<std::optional<Message>> decoded = DecodeOne(std::string("\0\0\0\1\x63", 5));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "unknown message type 99");
}

TEST(AgentProtocol, TextThatIsNotTheProtocolIsRefused) {
  // What a login banner would look like on the control stream: its first bytes read as a length.
  StatusOr<std::optional<Message>> decoded = DecodeOne("Welcome to server1!\n");
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("exceeds the limit"), std::string::npos);
}

TEST(AgentProtocol, HelloWithWrongMagicIsRefused) {
  ByteWriter fields;
  fields.U8(static_cast<uint8_t>(MessageType::kHello));
  fields.Bytes("some-other-protocol");
  fields.U32(kProtocolVersion);
  fields.Bytes("0.1.0");
  fields.U32(0);
  fields.U32(0);
  ByteWriter frame;
  frame.U32(static_cast<uint32_t>(fields.data().size()));
  StatusOr<std::optional<Message>> decoded = DecodeOne(frame.Take() + fields.data());
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

TEST(AgentProtocol, HugeListCountsDoNotAllocate) {
  ByteWriter fields;
  fields.U8(static_cast<uint8_t>(MessageType::kLaunch));
  fields.U32(1000);
  fields.U32(0xffffffff);  // rank count far beyond the bytes present
  ByteWriter frame;
  frame.U32(static_cast<uint32_t>(fields.data().size()));
  StatusOr<std::optional<Message>> decoded = DecodeOne(frame.Take() + fields.data());
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "malformed Launch message");
}

// Random bytes and randomly corrupted frames must give an error or a message, never a crash;
// under the sanitizer build this also checks every read and allocation.
TEST(AgentProtocol, RandomGarbageNeverCrashes) {
  std::mt19937 random(20261122);
  std::vector<std::string> frames;
  for (const Message& message : SampleMessages()) frames.push_back(EncodeFrame(message));
  int errors = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string bytes;
    if (round % 2 == 0) {
      bytes.resize(random() % 64);
      for (char& c : bytes) c = static_cast<char>(random());
    } else {
      bytes = frames[random() % frames.size()];
      for (int flips = 1 + random() % 4; flips > 0; --flips) {
        bytes[4 + random() % (bytes.size() - 4)] = static_cast<char>(random());
      }
    }
    FrameDecoder decoder;
    decoder.Append(bytes);
    for (int i = 0; i < 4; ++i) {
      StatusOr<std::optional<Message>> next = decoder.Next();
      if (!next.ok()) {
        ++errors;
        break;
      }
      if (!next.value()) break;
    }
  }
  EXPECT_GT(errors, 1000);
}

}  // namespace
}  // namespace hvdrun::protocol
