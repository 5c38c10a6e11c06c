#include "common/rendezvous_protocol.h"

#include <type_traits>

#include "common/byte_codec.h"

namespace hvdrun::rendezvous {
namespace {

// Encode/Decode pairs, one per message. Decode returns false when the fields are malformed.

void Encode(ByteWriter& w, const Challenge& m) {
  w.Bytes(kMagic);
  w.U32(m.protocol_version);
  w.Bytes(m.nonce);
}
bool Decode(ByteReader& r, Challenge& m) {
  std::string magic;
  return r.Bytes(&magic) && magic == kMagic && r.U32(&m.protocol_version) && r.Bytes(&m.nonce);
}

void Encode(ByteWriter& w, const Proof& m) {
  w.Bytes(kMagic);
  w.U32(m.protocol_version);
  w.Bytes(m.proof);
}
bool Decode(ByteReader& r, Proof& m) {
  std::string magic;
  return r.Bytes(&magic) && magic == kMagic && r.U32(&m.protocol_version) && r.Bytes(&m.proof);
}

void Encode(ByteWriter& w, const Welcome& m) { w.Bytes(m.proof); }
bool Decode(ByteReader& r, Welcome& m) { return r.Bytes(&m.proof); }

void Encode(ByteWriter& w, const SetRequest& m) {
  w.Bytes(m.key);
  w.Bytes(m.value);
}
bool Decode(ByteReader& r, SetRequest& m) { return r.Bytes(&m.key) && r.Bytes(&m.value); }

void Encode(ByteWriter& w, const GetRequest& m) {
  w.Bytes(m.key);
  w.U32(m.timeout_ms);
}
bool Decode(ByteReader& r, GetRequest& m) { return r.Bytes(&m.key) && r.U32(&m.timeout_ms); }

void Encode(ByteWriter& w, const WaitRequest& m) {
  w.BytesList(m.keys);
  w.U32(m.timeout_ms);
}
bool Decode(ByteReader& r, WaitRequest& m) { return r.BytesList(&m.keys) && r.U32(&m.timeout_ms); }

void Encode(ByteWriter& w, const AddRequest& m) {
  w.Bytes(m.key);
  w.U64(static_cast<uint64_t>(m.delta));
}
bool Decode(ByteReader& r, AddRequest& m) {
  uint64_t delta = 0;
  if (!r.Bytes(&m.key) || !r.U64(&delta)) return false;
  m.delta = static_cast<int64_t>(delta);
  return true;
}

void Encode(ByteWriter& w, const CompareAndSetRequest& m) {
  w.Bytes(m.key);
  w.Bytes(m.expected);
  w.Bytes(m.desired);
}
bool Decode(ByteReader& r, CompareAndSetRequest& m) {
  return r.Bytes(&m.key) && r.Bytes(&m.expected) && r.Bytes(&m.desired);
}

void Encode(ByteWriter& w, const DeleteRequest& m) { w.Bytes(m.key); }
bool Decode(ByteReader& r, DeleteRequest& m) { return r.Bytes(&m.key); }

void Encode(ByteWriter& w, const ReportRequest& m) {
  w.I32(m.rank);
  w.Bytes(m.json);
}
bool Decode(ByteReader& r, ReportRequest& m) { return r.I32(&m.rank) && r.Bytes(&m.json); }

void Encode(ByteWriter&, const OkResponse&) {}
bool Decode(ByteReader&, OkResponse&) { return true; }

void Encode(ByteWriter& w, const ValueResponse& m) { w.Bytes(m.value); }
bool Decode(ByteReader& r, ValueResponse& m) { return r.Bytes(&m.value); }

void Encode(ByteWriter& w, const IntResponse& m) { w.U64(static_cast<uint64_t>(m.value)); }
bool Decode(ByteReader& r, IntResponse& m) {
  uint64_t value = 0;
  if (!r.U64(&value)) return false;
  m.value = static_cast<int64_t>(value);
  return true;
}

void Encode(ByteWriter& w, const ErrorResponse& m) { w.Bytes(m.message); }
bool Decode(ByteReader& r, ErrorResponse& m) { return r.Bytes(&m.message); }

template <typename T>
constexpr MessageType TypeOf() {
  if constexpr (std::is_same_v<T, Challenge>) return MessageType::kChallenge;
  if constexpr (std::is_same_v<T, Proof>) return MessageType::kProof;
  if constexpr (std::is_same_v<T, Welcome>) return MessageType::kWelcome;
  if constexpr (std::is_same_v<T, SetRequest>) return MessageType::kSetRequest;
  if constexpr (std::is_same_v<T, GetRequest>) return MessageType::kGetRequest;
  if constexpr (std::is_same_v<T, WaitRequest>) return MessageType::kWaitRequest;
  if constexpr (std::is_same_v<T, AddRequest>) return MessageType::kAddRequest;
  if constexpr (std::is_same_v<T, CompareAndSetRequest>) return MessageType::kCompareAndSetRequest;
  if constexpr (std::is_same_v<T, DeleteRequest>) return MessageType::kDeleteRequest;
  if constexpr (std::is_same_v<T, ReportRequest>) return MessageType::kReportRequest;
  if constexpr (std::is_same_v<T, OkResponse>) return MessageType::kOkResponse;
  if constexpr (std::is_same_v<T, ValueResponse>) return MessageType::kValueResponse;
  if constexpr (std::is_same_v<T, IntResponse>) return MessageType::kIntResponse;
  if constexpr (std::is_same_v<T, ErrorResponse>) return MessageType::kErrorResponse;
}

// Decodes a message of type T, requiring that its fields use every byte.
template <typename T>
StatusOr<Message> DecodeAs(std::string_view fields, std::string_view name) {
  ByteReader reader(fields);
  T message;
  if (!Decode(reader, message)) return Status::Error("malformed " + std::string(name) + " message");
  if (!reader.AtEnd()) {
    return Status::Error(std::string(name) + " message has " + std::to_string(reader.remaining()) +
                         " extra bytes");
  }
  return Message(std::move(message));
}

}  // namespace

std::string_view MessageName(const Message& message) {
  static constexpr std::string_view kNames[] = {
      "Challenge",     "Proof",         "Welcome",    "SetRequest",
      "GetRequest",    "WaitRequest",   "AddRequest", "CompareAndSetRequest",
      "DeleteRequest", "ReportRequest", "OkResponse", "ValueResponse",
      "IntResponse",   "ErrorResponse"};
  static_assert(std::size(kNames) == std::variant_size_v<Message>);
  return kNames[message.index()];
}

std::string EncodeFrame(const Message& message) {
  ByteWriter fields;
  std::visit(
      [&](const auto& m) {
        fields.U8(static_cast<uint8_t>(TypeOf<std::decay_t<decltype(m)>>()));
        Encode(fields, m);
      },
      message);
  ByteWriter frame;
  frame.U32(static_cast<uint32_t>(fields.data().size()));
  std::string out = frame.Take();
  out.append(fields.data());
  return out;
}

StatusOr<Message> DecodeMessage(uint8_t type, std::string_view fields) {
  switch (static_cast<MessageType>(type)) {
    case MessageType::kChallenge:
      return DecodeAs<Challenge>(fields, "Challenge");
    case MessageType::kProof:
      return DecodeAs<Proof>(fields, "Proof");
    case MessageType::kWelcome:
      return DecodeAs<Welcome>(fields, "Welcome");
    case MessageType::kSetRequest:
      return DecodeAs<SetRequest>(fields, "SetRequest");
    case MessageType::kGetRequest:
      return DecodeAs<GetRequest>(fields, "GetRequest");
    case MessageType::kWaitRequest:
      return DecodeAs<WaitRequest>(fields, "WaitRequest");
    case MessageType::kAddRequest:
      return DecodeAs<AddRequest>(fields, "AddRequest");
    case MessageType::kCompareAndSetRequest:
      return DecodeAs<CompareAndSetRequest>(fields, "CompareAndSetRequest");
    case MessageType::kDeleteRequest:
      return DecodeAs<DeleteRequest>(fields, "DeleteRequest");
    case MessageType::kReportRequest:
      return DecodeAs<ReportRequest>(fields, "ReportRequest");
    case MessageType::kOkResponse:
      return DecodeAs<OkResponse>(fields, "OkResponse");
    case MessageType::kValueResponse:
      return DecodeAs<ValueResponse>(fields, "ValueResponse");
    case MessageType::kIntResponse:
      return DecodeAs<IntResponse>(fields, "IntResponse");
    case MessageType::kErrorResponse:
      return DecodeAs<ErrorResponse>(fields, "ErrorResponse");
  }
  return Status::Error("unknown message type " + std::to_string(type));
}

StatusOr<std::optional<Message>> FrameDecoder::Next() {
  std::string_view rest{buffer_};
  rest.remove_prefix(consumed_);
  ByteReader header(rest);
  uint32_t length = 0;
  if (!header.U32(&length)) return std::optional<Message>();
  if (length == 0) return Status::Error("empty frame (length 0)");
  if (length > max_frame_bytes_) {
    return Status::Error("frame of " + std::to_string(length) + " bytes exceeds the limit of " +
                         std::to_string(max_frame_bytes_));
  }
  if (rest.size() - 4 < length) return std::optional<Message>();
  std::string_view body = rest.substr(4, length);
  StatusOr<Message> message = DecodeMessage(static_cast<uint8_t>(body[0]), body.substr(1));
  if (!message.ok()) return message.status();
  consumed_ += 4 + length;
  // Drop consumed bytes once they dominate the buffer, keeping Append amortised O(n).
  if (consumed_ > 4096 && consumed_ * 2 > buffer_.size()) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  return std::optional<Message>(std::move(message).value());
}

}  // namespace hvdrun::rendezvous
