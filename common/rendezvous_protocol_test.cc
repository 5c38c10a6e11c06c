#include "common/rendezvous_protocol.h"

#include <gtest/gtest.h>

#include <random>

#include "common/byte_codec.h"

namespace hvdrun::rendezvous {
namespace {

std::vector<Message> SampleMessages() {
  std::string binary("\0\xff\n\x80 value", 10);
  return {
      Challenge{kProtocolVersion, std::string(32, '\x5a')},
      Proof{kProtocolVersion, std::string(64, 'a')},
      Welcome{std::string(64, 'b')},
      SetRequest{"gloo/3", binary},
      SetRequest{"", ""},
      GetRequest{"nccl/unique_id", 30000},
      WaitRequest{{"a", "b", ""}, 5},
      WaitRequest{{}, 0},
      AddRequest{"counter", -7},
      AddRequest{"counter", INT64_MIN},
      CompareAndSetRequest{"leader", "", "rank 0"},
      DeleteRequest{"gloo/3"},
      ReportRequest{3, R"({"rank": 3, "steps": [0.1, 0.2]})"},
      ReportRequest{-1, ""},
      OkResponse{},
      ValueResponse{binary},
      IntResponse{INT64_MAX},
      ErrorResponse{"timed out after 30 s waiting for key 'gloo/3'"},
  };
}

StatusOr<std::optional<Message>> DecodeOne(std::string_view bytes, uint32_t limit = kMaxFrameBytes) {
  FrameDecoder decoder(limit);
  decoder.Append(bytes);
  return decoder.Next();
}

std::string FrameOf(MessageType type, const std::string& fields) {
  ByteWriter frame;
  frame.U32(static_cast<uint32_t>(fields.size() + 1));
  frame.U8(static_cast<uint8_t>(type));
  return frame.Take() + fields;
}

TEST(RendezvousProtocol, EveryMessageRoundTrips) {
  for (const Message& message : SampleMessages()) {
    StatusOr<std::optional<Message>> decoded = DecodeOne(EncodeFrame(message));
    ASSERT_TRUE(decoded.ok()) << MessageName(message) << ": " << decoded.status().message();
    ASSERT_TRUE(decoded.value().has_value()) << MessageName(message);
    EXPECT_EQ(*decoded.value(), message) << MessageName(message);
  }
}

TEST(RendezvousProtocol, FramesArrivingByteByByteDecodeInOrder) {
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
  EXPECT_EQ(decoder.pending_bytes(), 0u);
}

TEST(RendezvousProtocol, EveryTruncationWaitsForMoreBytes) {
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
TEST(RendezvousProtocol, ShortenedFieldsAreMalformed) {
  for (const Message& message : SampleMessages()) {
    std::string frame = EncodeFrame(message);
    for (size_t cut = 1; cut + 5 <= frame.size(); ++cut) {
      std::string body = frame.substr(4, frame.size() - 4 - cut);
      ByteWriter header;
      header.U32(static_cast<uint32_t>(body.size()));
      StatusOr<std::optional<Message>> decoded = DecodeOne(header.Take() + body);
      ASSERT_FALSE(decoded.ok()) << MessageName(message) << " shortened by " << cut;
      EXPECT_NE(decoded.status().message().find("malformed"), std::string::npos)
          << decoded.status().message();
    }
  }
}

TEST(RendezvousProtocol, ExtraBytesAreRefused) {
  std::string frame = EncodeFrame(DeleteRequest{"k"});
  frame.push_back('x');
  frame[3] = static_cast<char>(frame[3] + 1);  // the length covers the extra byte
  StatusOr<std::optional<Message>> decoded = DecodeOne(frame);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "DeleteRequest message has 1 extra bytes");
}

TEST(RendezvousProtocol, OversizedFrameIsRefusedBeforeItArrives) {
  ByteWriter header;
  header.U32(kMaxFrameBytes + 1);
  StatusOr<std::optional<Message>> decoded = DecodeOne(header.Take());
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "frame of " + std::to_string(kMaxFrameBytes + 1) +
                                            " bytes exceeds the limit of " + std::to_string(kMaxFrameBytes));
}

TEST(RendezvousProtocol, HandshakeLimitAppliesUntilRaised) {
  std::string frame = EncodeFrame(SetRequest{"k", std::string(2000, 'v')});
  StatusOr<std::optional<Message>> decoded = DecodeOne(frame, kMaxHandshakeFrameBytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("exceeds the limit of 1024"), std::string::npos);

  FrameDecoder decoder(kMaxHandshakeFrameBytes);
  decoder.Append(frame);
  decoder.set_max_frame_bytes(kMaxFrameBytes);
  StatusOr<std::optional<Message>> raised = decoder.Next();
  ASSERT_TRUE(raised.ok()) << raised.status().message();
  EXPECT_TRUE(raised.value().has_value());
}

TEST(RendezvousProtocol, EmptyFrameIsRefused) {
  StatusOr<std::optional<Message>> decoded = DecodeOne(std::string(4, '\0'));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "empty frame (length 0)");
}

TEST(RendezvousProtocol, UnknownTypeIsRefused) {
  StatusOr<std::optional<Message>> decoded = DecodeOne(std::string("\0\0\0\1\x63", 5));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "unknown message type 99");
}

TEST(RendezvousProtocol, TextThatIsNotTheProtocolIsRefused) {
  StatusOr<std::optional<Message>> decoded = DecodeOne("GET / HTTP/1.1\r\n\r\n");
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("exceeds the limit"), std::string::npos);
}

TEST(RendezvousProtocol, WrongMagicIsRefused) {
  ByteWriter fields;
  fields.Bytes("hvdrun-agent-protocol");
  fields.U32(kProtocolVersion);
  fields.Bytes(std::string(64, 'a'));
  StatusOr<std::optional<Message>> decoded = DecodeOne(FrameOf(MessageType::kProof, fields.data()));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "malformed Proof message");
}

TEST(RendezvousProtocol, HugeCountsDoNotAllocate) {
  ByteWriter fields;
  fields.U32(0xffffffff);  // key count far beyond the bytes present
  fields.U32(0);
  StatusOr<std::optional<Message>> decoded = DecodeOne(FrameOf(MessageType::kWaitRequest, fields.data()));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "malformed WaitRequest message");

  ByteWriter value;
  value.U32(0xfffffff0);  // a string length far beyond the bytes present
  decoded = DecodeOne(FrameOf(MessageType::kValueResponse, value.data()));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "malformed ValueResponse message");
}

// Random bytes and randomly corrupted frames must give an error or a message, never a crash;
// under the sanitizer build this also checks every read and allocation (tests/fuzz/ goes further).
TEST(RendezvousProtocol, RandomGarbageNeverCrashes) {
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
        bytes[random() % bytes.size()] = static_cast<char>(random());
      }
    }
    FrameDecoder decoder(kMaxHandshakeFrameBytes);
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
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace hvdrun::rendezvous
