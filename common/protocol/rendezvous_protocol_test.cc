#include "common/protocol/rendezvous_protocol.h"

#include <gtest/gtest.h>

#include "common/protocol/byte_codec.h"
#include "common/protocol/framing_conformance.h"

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
      TimelineRequest{2, uint64_t{1} << 33, "[\n{\"name\":\"ALLREDUCE\"}"},
      TimelineRequest{0, 0, binary},
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

struct RendezvousProtocolSamples {
  using Message = rendezvous::Message;
  using FrameDecoder = rendezvous::FrameDecoder;
  static std::vector<Message> Samples() { return SampleMessages(); }
  static std::string EncodeFrame(const Message& message) { return rendezvous::EncodeFrame(message); }
  static std::string_view MessageName(const Message& message) { return rendezvous::MessageName(message); }
  static bool Extensible(const Message& /*message*/) { return false; }
  static std::vector<size_t> EarlierVersionCuts(const Message& /*message*/) { return {}; }
};

INSTANTIATE_TYPED_TEST_SUITE_P(RendezvousProtocol, FramedProtocol, RendezvousProtocolSamples);

// The type bytes docs/protocol.md gives.
TEST(RendezvousProtocol, MessagesCarryTheirDocumentedTypes) {
  std::vector<std::pair<Message, int>> types = {
      {Challenge{}, 1},      {Proof{}, 2},          {Welcome{}, 3},          {SetRequest{}, 10},
      {GetRequest{}, 11},    {WaitRequest{}, 12},   {AddRequest{}, 13},      {CompareAndSetRequest{}, 14},
      {DeleteRequest{}, 15}, {ReportRequest{}, 16}, {TimelineRequest{}, 17}, {OkResponse{}, 20},
      {ValueResponse{}, 21}, {IntResponse{}, 22},   {ErrorResponse{}, 23},
  };
  ASSERT_EQ(types.size(), std::variant_size_v<Message>);
  for (const auto& [message, type] : types) {
    EXPECT_EQ(static_cast<uint8_t>(EncodeFrame(message)[4]), type) << MessageName(message);
  }
  EXPECT_EQ(MessageName(CompareAndSetRequest{}), "CompareAndSetRequest");
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

TEST(RendezvousProtocol, WrongMagicIsRefused) {
  ByteWriter fields;
  fields.Bytes("hvdrun-agent-protocol");
  fields.U32(kProtocolVersion);
  fields.Bytes(std::string(64, 'a'));
  StatusOr<Message> decoded = DecodeMessage(static_cast<uint8_t>(MessageType::kProof), fields.data());
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "malformed Proof message");
}

TEST(RendezvousProtocol, HugeCountsDoNotAllocate) {
  ByteWriter fields;
  fields.U32(0xffffffff);  // key count far beyond the bytes present
  fields.U32(0);
  StatusOr<Message> decoded = DecodeMessage(static_cast<uint8_t>(MessageType::kWaitRequest), fields.data());
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "malformed WaitRequest message");

  ByteWriter value;
  value.U32(0xfffffff0);  // a string length far beyond the bytes present
  decoded = DecodeMessage(static_cast<uint8_t>(MessageType::kValueResponse), value.data());
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "malformed ValueResponse message");
}

}  // namespace
}  // namespace hvdrun::rendezvous
