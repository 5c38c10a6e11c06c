// The framing that both wire protocols share, tested once, on a small protocol of its own; each
// protocol's test covers its own messages (common/protocol/framing_conformance.h).
#include "common/protocol/framing.h"

#include <gtest/gtest.h>

#include <random>

#include "common/protocol/framing_conformance.h"

namespace hvdrun::framing {
namespace {

enum class ToyType : uint8_t { kGreeting = 1, kNumber = 2, kText = 7 };

struct Greeting {  // extensible, like the agent protocol's Hello
  uint32_t version = 0;
  std::string name;
  bool operator==(const Greeting&) const = default;
};

struct Number {
  uint32_t value = 0;
  bool operator==(const Number&) const = default;
};

struct Text {
  std::string text;
  bool operator==(const Text&) const = default;
};

using ToyMessage = std::variant<Greeting, Number, Text>;

struct ToyFields {
  static void Write(ByteWriter& w, const Greeting& m) {
    w.U32(m.version);
    w.Bytes(m.name);
  }
  static bool Read(ByteReader& r, Greeting& m) { return r.U32(&m.version) && r.Bytes(&m.name); }
  static void Write(ByteWriter& w, const Number& m) { w.U32(m.value); }
  static bool Read(ByteReader& r, Number& m) { return r.U32(&m.value); }
  static void Write(ByteWriter& w, const Text& m) { w.Bytes(m.text); }
  static bool Read(ByteReader& r, Text& m) { return r.Bytes(&m.text); }
};

constexpr MessageCodec<ToyMessage, ToyType, ToyFields> kToyCodec({{
    {ToyType::kGreeting, "Greeting", /*extensible=*/true},
    {ToyType::kNumber, "Number"},
    {ToyType::kText, "Text"},
}});

StatusOr<ToyMessage> DecodeToy(uint8_t type, std::string_view fields) {
  return kToyCodec.Decode(type, fields);
}

constexpr uint32_t kToyMaxFrameBytes = 64;
using ToyDecoder = FrameDecoder<ToyMessage, DecodeToy, kToyMaxFrameBytes>;

struct ToyProtocol {
  using Message = ToyMessage;
  using FrameDecoder = ToyDecoder;
  static std::vector<Message> Samples() {
    return {Greeting{3, "toy"}, Greeting{0, ""}, Number{0xfffffffe}, Text{std::string("\0\xff\n", 3)},
            Text{""}};
  }
  static std::string EncodeFrame(const Message& message) { return kToyCodec.EncodeFrame(message); }
  static std::string_view MessageName(const Message& message) { return kToyCodec.Name(message); }
  static bool Extensible(const Message& message) { return std::holds_alternative<Greeting>(message); }
  static std::vector<size_t> EarlierVersionCuts(const Message& /*message*/) { return {}; }
};

INSTANTIATE_TYPED_TEST_SUITE_P(Toy, FramedProtocol, ToyProtocol);

StatusOr<std::optional<ToyMessage>> DecodeOne(std::string_view bytes) {
  ToyDecoder decoder;
  decoder.Append(bytes);
  return decoder.Next();
}

std::string ToyFrame(ToyType type, std::string_view fields) {
  return Frame(std::string(1, static_cast<char>(type)) + std::string(fields));
}

TEST(Framing, AFrameIsItsLengthThenItsTypeAndFields) {
  EXPECT_EQ(kToyCodec.EncodeFrame(Number{0x01020304}), std::string("\0\0\0\5\2\1\2\3\4", 9));
  EXPECT_EQ(kToyCodec.EncodeFrame(Text{"ab"}), std::string("\0\0\0\7\7\0\0\0\2ab", 11));
  EXPECT_EQ(kToyCodec.Name(Text{}), "Text");
}

TEST(Framing, FramesArrivingByteByByteDecodeInOrder) {
  std::string stream;
  for (const ToyMessage& message : ToyProtocol::Samples()) stream += kToyCodec.EncodeFrame(message);
  ToyDecoder decoder;
  std::vector<ToyMessage> decoded;
  for (char byte : stream) {
    decoder.Append(std::string_view(&byte, 1));
    while (true) {
      StatusOr<std::optional<ToyMessage>> next = decoder.Next();
      ASSERT_TRUE(next.ok()) << next.status().message();
      if (!next.value()) break;
      decoded.push_back(std::move(*next.value()));
    }
  }
  EXPECT_EQ(decoded, ToyProtocol::Samples());
  EXPECT_TRUE(decoder.pending().empty());
}

TEST(Framing, EveryTruncationWaitsForMoreBytes) {
  for (const ToyMessage& message : ToyProtocol::Samples()) {
    std::string frame = kToyCodec.EncodeFrame(message);
    for (size_t length = 0; length < frame.size(); ++length) {
      StatusOr<std::optional<ToyMessage>> decoded = DecodeOne(frame.substr(0, length));
      ASSERT_TRUE(decoded.ok()) << kToyCodec.Name(message) << " cut at " << length;
      EXPECT_FALSE(decoded.value().has_value()) << kToyCodec.Name(message) << " cut at " << length;
    }
  }
}

// Many frames in pieces that straddle them: the decoder drops what it consumed along the way
// (past 4 KiB) and still yields every message, in order.
TEST(Framing, ALongStreamInUnevenPiecesDecodesWhole) {
  std::string stream;
  std::vector<ToyMessage> sent;
  for (uint32_t i = 0; i < 3000; ++i) {
    sent.push_back(i % 3 == 0 ? ToyMessage(Number{i}) : ToyMessage(Text{std::string(i % 50, 'x')}));
    stream += kToyCodec.EncodeFrame(sent.back());
  }
  const std::string_view all = stream;
  ToyDecoder decoder;
  std::vector<ToyMessage> decoded;
  std::mt19937 random(7);
  for (size_t offset = 0; offset < stream.size();) {
    size_t piece = 1 + random() % 300;
    decoder.Append(all.substr(offset, piece));
    offset = std::min(offset + piece, stream.size());
    while (true) {
      StatusOr<std::optional<ToyMessage>> next = decoder.Next();
      ASSERT_TRUE(next.ok()) << next.status().message();
      if (!next.value()) break;
      decoded.push_back(std::move(*next.value()));
    }
    // What is pending is the end of what arrived: the start of a frame not yet complete.
    ASSERT_TRUE(all.substr(0, offset).ends_with(decoder.pending()));
    ASSERT_LT(decoder.pending().size(), kLengthBytes + kToyMaxFrameBytes);
  }
  EXPECT_EQ(decoded, sent);
  EXPECT_TRUE(decoder.pending().empty());
}

TEST(Framing, ExtraBytesAreRefused) {
  StatusOr<std::optional<ToyMessage>> decoded =
      DecodeOne(ToyFrame(ToyType::kNumber, std::string("\0\0\0\1x", 5)));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "Number message has 1 extra bytes");
}

TEST(Framing, ExtensibleMessagesIgnoreTrailingBytes) {
  std::string fields = std::string("\0\0\0\4\0\0\0\3toy", 11) + "a later field";
  StatusOr<std::optional<ToyMessage>> decoded = DecodeOne(ToyFrame(ToyType::kGreeting, fields));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded.value(), ToyMessage(Greeting{4, "toy"}));
}

TEST(Framing, MalformedFieldsNameTheMessage) {
  StatusOr<std::optional<ToyMessage>> decoded =
      DecodeOne(ToyFrame(ToyType::kText, std::string("\0\0\0\5abc", 7)));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "malformed Text message");
  EXPECT_EQ(kToyCodec.Decode(static_cast<uint8_t>(ToyType::kNumber), "").status().message(),
            "malformed Number message");
}

TEST(Framing, UnknownTypeIsRefused) {
  StatusOr<std::optional<ToyMessage>> decoded = DecodeOne(std::string("\0\0\0\1\x63", 5));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "unknown message type 99");
  EXPECT_EQ(kToyCodec.Decode(3, "").status().message(), "unknown message type 3");
}

TEST(Framing, EmptyFrameIsRefused) {
  StatusOr<std::optional<ToyMessage>> decoded = DecodeOne(std::string(4, '\0'));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "empty frame (length 0)");
}

TEST(Framing, OversizedFrameIsRefusedBeforeItArrives) {
  StatusOr<std::optional<ToyMessage>> decoded = DecodeOne(std::string("\0\0\0\x41", 4));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "frame of 65 bytes exceeds the limit of 64");
  // A frame of exactly the limit is accepted.
  std::string largest = kToyCodec.EncodeFrame(Text{std::string(kToyMaxFrameBytes - 5, 't')});
  ASSERT_EQ(largest.size(), kLengthBytes + kToyMaxFrameBytes);
  EXPECT_TRUE(DecodeOne(largest).ok());
}

TEST(Framing, TheLimitAppliesUntilRaised) {
  std::string frame = kToyCodec.EncodeFrame(Text{std::string(100, 't')});
  ToyDecoder small(16);
  small.Append(frame);
  StatusOr<std::optional<ToyMessage>> refused = small.Next();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "frame of 105 bytes exceeds the limit of 16");

  ToyDecoder raised(16);
  raised.Append(frame);
  raised.set_max_frame_bytes(1024);
  StatusOr<std::optional<ToyMessage>> decoded = raised.Next();
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded.value(), ToyMessage(Text{std::string(100, 't')}));
}

TEST(Framing, TextThatIsNotTheProtocolIsRefused) {
  // A login banner or an HTTP request on the stream: its first bytes read as a huge length.
  for (std::string_view text : {"Welcome to server1!\n", "GET / HTTP/1.1\r\n\r\n"}) {
    StatusOr<std::optional<ToyMessage>> decoded = DecodeOne(text);
    ASSERT_FALSE(decoded.ok()) << text;
    EXPECT_NE(decoded.status().message().find("exceeds the limit"), std::string::npos);
  }
}

// After an error the frame that caused it is still pending, for showing what the peer sent.
TEST(Framing, AFrameThatFailsToDecodeStaysPending) {
  std::string bad = ToyFrame(ToyType::kNumber, "ab");
  ToyDecoder decoder;
  decoder.Append(kToyCodec.EncodeFrame(Number{1}) + bad);
  ASSERT_TRUE(decoder.Next().ok());
  EXPECT_FALSE(decoder.Next().ok());
  EXPECT_EQ(decoder.pending(), bad);
}

// Random bytes give an error or a message, never a crash; under the sanitizer build this also
// checks every read and allocation.
TEST(Framing, RandomBytesNeverCrash) {
  std::mt19937 random(20261122);
  int errors = 0;
  for (int round = 0; round < 10000; ++round) {
    std::string bytes(random() % 64, '\0');
    for (char& c : bytes) c = static_cast<char>(random());
    // Every other round a small length, so that the bytes after it are read as a frame.
    if (round % 2 == 1 && bytes.size() >= kLengthBytes) bytes[0] = bytes[1] = bytes[2] = '\0';
    ToyDecoder decoder;
    decoder.Append(bytes);
    for (int i = 0; i < 4; ++i) {
      StatusOr<std::optional<ToyMessage>> next = decoder.Next();
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
}  // namespace hvdrun::framing
