// The framing that hvdrun's two wire protocols share: the agent protocol (common/protocol/agent_protocol.h)
// and the rendezvous protocol (common/protocol/rendezvous_protocol.h). docs/protocol.md, "Framing", is the
// reference; each protocol keeps only its message types and their fields.
//
// A frame is a u32 big-endian length L, then L bytes: a u8 message type and the message's fields
// (common/protocol/byte_codec.h). L counts the type byte, so L >= 1, and L <= the reader's limit, which is
// checked as soon as the length's 4 bytes arrive. A message must use all of its bytes, unless its
// type is extensible (trailing bytes, fields that a later protocol version appends, are ignored).
// Anything else is a protocol error, whose one line is one of:
//   "empty frame (length 0)"
//   "frame of N bytes exceeds the limit of M"
//   "unknown message type T"
//   "malformed NAME message"            (the fields do not decode)
//   "NAME message has N extra bytes"
//
// A protocol plugs in with a MessageCodec (its messages' type bytes, names and field codecs) and a
// FrameDecoder built on it. Nothing here is thread-safe; every function is reentrant.
#ifndef HVDRUN_COMMON_PROTOCOL_FRAMING_H_
#define HVDRUN_COMMON_PROTOCOL_FRAMING_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "common/protocol/byte_codec.h"
#include "hvdrun/status.h"

namespace hvdrun::framing {

// Bytes of a frame's length prefix.
inline constexpr size_t kLengthBytes = 4;

// `body` (a type byte and the fields) with its length in front: a whole frame.
std::string Frame(std::string_view body);

Status UnknownMessageType(uint8_t type);
Status MalformedMessage(std::string_view name);
Status ExtraBytes(std::string_view name, size_t count);

// Buffers a byte stream that arrives in arbitrary pieces and splits it into frames. Appending is
// amortised O(n): consumed bytes are dropped once they dominate the buffer.
class FrameBuffer {
 public:
  explicit FrameBuffer(uint32_t max_frame_bytes) : max_frame_bytes_(max_frame_bytes) {}

  void Append(std::string_view bytes) { buffer_.append(bytes); }
  // Changes the largest frame accepted from now on (raised once a connection is authenticated).
  void set_max_frame_bytes(uint32_t max_frame_bytes) { max_frame_bytes_ = max_frame_bytes; }

  // The body of the next complete frame (its type byte and fields: at least one byte), which stays
  // in the buffer until Consume(); std::nullopt when more bytes are needed; an error for a length
  // of 0 or above the limit. The view is valid until the next Append or Consume.
  StatusOr<std::optional<std::string_view>> Peek() const;
  // Drops the frame that Peek() returned; does nothing when there is no complete frame.
  void Consume();

  // Bytes received but not yet consumed (for showing what a peer that is not hvdrun's sent).
  std::string_view pending() const { return std::string_view{buffer_}.substr(consumed_); }

 private:
  std::string buffer_;
  size_t consumed_ = 0;
  uint32_t max_frame_bytes_;
};

// One message type of a protocol: its type byte on the wire, its name in errors and logs
// ("Hello"), and whether bytes after its fields are ignored rather than refused.
template <typename Type>
struct MessageKind {
  Type type;
  std::string_view name;
  bool extensible = false;
};

// A protocol's messages: Message is a std::variant of the message structs, Type the enum of their
// type bytes, and Fields a class with, for every alternative T of Message,
//   static void Write(ByteWriter& writer, const T& message);
//   static bool Read(ByteReader& reader, T& message);  // false when the fields are malformed
// `kinds` describes the alternatives in the variant's order.
template <typename Message, typename Type, typename Fields>
class MessageCodec {
 public:
  static constexpr size_t kCount = std::variant_size_v<Message>;
  using Kinds = std::array<MessageKind<Type>, kCount>;

  constexpr explicit MessageCodec(Kinds kinds) : kinds_(kinds) {}

  std::string_view Name(const Message& message) const { return kinds_[message.index()].name; }

  // The whole frame: length, type and fields.
  std::string EncodeFrame(const Message& message) const {
    ByteWriter body;
    body.U8(static_cast<uint8_t>(kinds_[message.index()].type));
    std::visit([&body](const auto& alternative) { Fields::Write(body, alternative); }, message);
    return Frame(body.data());
  }

  // Decodes one message from its type byte and fields.
  StatusOr<Message> Decode(uint8_t type, std::string_view fields) const {
    static constexpr std::array<Decoder, kCount> kDecoders = Decoders(std::make_index_sequence<kCount>());
    for (size_t i = 0; i < kCount; ++i) {
      if (static_cast<uint8_t>(kinds_[i].type) == type) return kDecoders[i](kinds_[i], fields);
    }
    return UnknownMessageType(type);
  }

 private:
  using Decoder = StatusOr<Message> (*)(const MessageKind<Type>& kind, std::string_view fields);

  template <size_t I>
  static StatusOr<Message> DecodeAs(const MessageKind<Type>& kind, std::string_view fields) {
    ByteReader reader(fields);
    std::variant_alternative_t<I, Message> message;
    if (!Fields::Read(reader, message)) return MalformedMessage(kind.name);
    if (!kind.extensible && !reader.AtEnd()) return ExtraBytes(kind.name, reader.remaining());
    return Message(std::in_place_index<I>, std::move(message));
  }

  template <size_t... I>
  static constexpr std::array<Decoder, kCount> Decoders(std::index_sequence<I...> /*unused*/) {
    return {&DecodeAs<I>...};
  }

  Kinds kinds_;
};

// Reassembles a protocol's messages from a byte stream that arrives in arbitrary pieces; kDecode
// is the protocol's DecodeMessage. The limit starts at kDefaultMaxFrameBytes unless given.
template <typename Message, StatusOr<Message> (*kDecode)(uint8_t, std::string_view),
          uint32_t kDefaultMaxFrameBytes>
class FrameDecoder {
 public:
  explicit FrameDecoder(uint32_t max_frame_bytes = kDefaultMaxFrameBytes) : frames_(max_frame_bytes) {}

  void Append(std::string_view bytes) { frames_.Append(bytes); }
  void set_max_frame_bytes(uint32_t max_frame_bytes) { frames_.set_max_frame_bytes(max_frame_bytes); }

  // The next complete message, std::nullopt when more bytes are needed, or an error that names
  // what is wrong with the frame (then pending() still begins with that frame). After an error the
  // decoder must not be used again.
  StatusOr<std::optional<Message>> Next() {
    StatusOr<std::optional<std::string_view>> body = frames_.Peek();
    if (!body.ok()) return body.status();
    if (!body.value()) return std::optional<Message>();
    std::string_view frame = *body.value();
    StatusOr<Message> message = kDecode(static_cast<uint8_t>(frame.front()), frame.substr(1));
    if (!message.ok()) return message.status();
    frames_.Consume();
    return std::optional<Message>(std::move(message).value());
  }

  // Bytes received but not yet decoded.
  std::string_view pending() const { return frames_.pending(); }

 private:
  FrameBuffer frames_;
};

}  // namespace hvdrun::framing

#endif  // HVDRUN_COMMON_PROTOCOL_FRAMING_H_
