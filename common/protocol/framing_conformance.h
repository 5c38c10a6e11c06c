// The checks that every protocol built on common/protocol/framing.h passes with its own messages, as a
// GoogleTest typed test suite. A protocol's test instantiates it with a class P that has:
//   using Message = ...;        // the protocol's std::variant of messages
//   using FrameDecoder = ...;   // the protocol's framing::FrameDecoder
//   static std::vector<Message> Samples();  // every message type, with unusual field values
//   static std::string EncodeFrame(const Message&);
//   static std::string_view MessageName(const Message&);
//   // Whether bytes after `message`'s fields are ignored (framing::MessageKind::extensible).
//   static bool Extensible(const Message& message);
//   // How many bytes may be cut from the end of `message`'s fields and still leave a valid message
//   // (an extensible message of an earlier protocol version); empty for most messages.
//   static std::vector<size_t> EarlierVersionCuts(const Message& message);
// like so:
//   INSTANTIATE_TYPED_TEST_SUITE_P(AgentProtocol, FramedProtocol, AgentProtocolSamples);
// The framing itself (limits, empty frames, unknown types, the buffer) is tested once, in
// common/protocol/framing_test.cc.
#ifndef HVDRUN_COMMON_PROTOCOL_FRAMING_CONFORMANCE_H_
#define HVDRUN_COMMON_PROTOCOL_FRAMING_CONFORMANCE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/protocol/framing.h"

namespace hvdrun {

template <typename P>
class FramedProtocol : public ::testing::Test {
 protected:
  using Message = typename P::Message;

  static StatusOr<std::optional<Message>> DecodeOne(std::string_view bytes) {
    typename P::FrameDecoder decoder;
    decoder.Append(bytes);
    return decoder.Next();
  }
};

TYPED_TEST_SUITE_P(FramedProtocol);

TYPED_TEST_P(FramedProtocol, EveryMessageRoundTrips) {
  for (const auto& message : TypeParam::Samples()) {
    auto decoded = this->DecodeOne(TypeParam::EncodeFrame(message));
    ASSERT_TRUE(decoded.ok()) << TypeParam::MessageName(message) << ": " << decoded.status().message();
    ASSERT_TRUE(decoded.value().has_value()) << TypeParam::MessageName(message);
    EXPECT_EQ(*decoded.value(), message) << TypeParam::MessageName(message);
  }
}

TYPED_TEST_P(FramedProtocol, ExtraBytesAreRefusedUnlessExtensible) {
  for (const auto& message : TypeParam::Samples()) {
    std::string frame = TypeParam::EncodeFrame(message);
    auto decoded = this->DecodeOne(framing::Frame(frame.substr(framing::kLengthBytes) + "x"));
    if (TypeParam::Extensible(message)) {
      ASSERT_TRUE(decoded.ok()) << TypeParam::MessageName(message) << ": " << decoded.status().message();
      EXPECT_EQ(*decoded.value(), message);
    } else {
      ASSERT_FALSE(decoded.ok()) << TypeParam::MessageName(message);
      EXPECT_EQ(decoded.status().message(),
                std::string(TypeParam::MessageName(message)) + " message has 1 extra bytes");
    }
  }
}

// A frame whose length claims fewer bytes than the message's fields need: the message is malformed,
// and the error names it.
TYPED_TEST_P(FramedProtocol, ShortenedFieldsAreMalformed) {
  for (const auto& message : TypeParam::Samples()) {
    std::string frame = TypeParam::EncodeFrame(message);
    std::vector<size_t> earlier = TypeParam::EarlierVersionCuts(message);
    for (size_t cut = 1; cut + framing::kLengthBytes + 1 <= frame.size(); ++cut) {
      if (std::find(earlier.begin(), earlier.end(), cut) != earlier.end()) continue;
      auto decoded = this->DecodeOne(
          framing::Frame(frame.substr(framing::kLengthBytes, frame.size() - framing::kLengthBytes - cut)));
      ASSERT_FALSE(decoded.ok()) << TypeParam::MessageName(message) << " shortened by " << cut;
      EXPECT_EQ(decoded.status().message(),
                "malformed " + std::string(TypeParam::MessageName(message)) + " message");
    }
  }
}

// Randomly corrupted frames of every message give an error or a message, never a crash; under the
// sanitizer build this also checks every read and allocation of the field decoders (tests/fuzz/
// goes further).
TYPED_TEST_P(FramedProtocol, CorruptedFramesNeverCrash) {
  std::mt19937 random(20261122);
  std::vector<std::string> frames;
  for (const auto& message : TypeParam::Samples()) frames.push_back(TypeParam::EncodeFrame(message));
  int errors = 0;
  for (int round = 0; round < 10000; ++round) {
    std::string bytes = frames[random() % frames.size()];
    for (int flips = 1 + static_cast<int>(random() % 4); flips > 0; --flips) {
      bytes[framing::kLengthBytes + random() % (bytes.size() - framing::kLengthBytes)] =
          static_cast<char>(random());
    }
    auto decoded = this->DecodeOne(bytes);
    if (!decoded.ok()) ++errors;
  }
  EXPECT_GT(errors, 1000);
}

REGISTER_TYPED_TEST_SUITE_P(FramedProtocol, EveryMessageRoundTrips, ExtraBytesAreRefusedUnlessExtensible,
                            ShortenedFieldsAreMalformed, CorruptedFramesNeverCrash);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PROTOCOL_FRAMING_CONFORMANCE_H_
