#include "common/protocol/rendezvous_protocol.h"

#include "common/protocol/byte_codec.h"

namespace hvdrun::rendezvous {
namespace {

// The fields of each message, as framing::MessageCodec takes them: Write encodes them, Read decodes
// them and returns false when they are malformed.
struct RendezvousFields {
  static void Write(ByteWriter& w, const Challenge& m) {
    w.Bytes(kMagic);
    w.U32(m.protocol_version);
    w.Bytes(m.nonce);
  }
  static bool Read(ByteReader& r, Challenge& m) {
    return r.Expect(kMagic) && r.U32(&m.protocol_version) && r.Bytes(&m.nonce);
  }

  static void Write(ByteWriter& w, const Proof& m) {
    w.Bytes(kMagic);
    w.U32(m.protocol_version);
    w.Bytes(m.proof);
  }
  static bool Read(ByteReader& r, Proof& m) {
    return r.Expect(kMagic) && r.U32(&m.protocol_version) && r.Bytes(&m.proof);
  }

  static void Write(ByteWriter& w, const Welcome& m) { w.Bytes(m.proof); }
  static bool Read(ByteReader& r, Welcome& m) { return r.Bytes(&m.proof); }

  static void Write(ByteWriter& w, const SetRequest& m) {
    w.Bytes(m.key);
    w.Bytes(m.value);
  }
  static bool Read(ByteReader& r, SetRequest& m) { return r.Bytes(&m.key) && r.Bytes(&m.value); }

  static void Write(ByteWriter& w, const GetRequest& m) {
    w.Bytes(m.key);
    w.U32(m.timeout_ms);
  }
  static bool Read(ByteReader& r, GetRequest& m) { return r.Bytes(&m.key) && r.U32(&m.timeout_ms); }

  static void Write(ByteWriter& w, const WaitRequest& m) {
    w.BytesList(m.keys);
    w.U32(m.timeout_ms);
  }
  static bool Read(ByteReader& r, WaitRequest& m) { return r.BytesList(&m.keys) && r.U32(&m.timeout_ms); }

  static void Write(ByteWriter& w, const AddRequest& m) {
    w.Bytes(m.key);
    w.U64(static_cast<uint64_t>(m.delta));
  }
  static bool Read(ByteReader& r, AddRequest& m) {
    uint64_t delta = 0;
    if (!r.Bytes(&m.key) || !r.U64(&delta)) return false;
    m.delta = static_cast<int64_t>(delta);
    return true;
  }

  static void Write(ByteWriter& w, const CompareAndSetRequest& m) {
    w.Bytes(m.key);
    w.Bytes(m.expected);
    w.Bytes(m.desired);
  }
  static bool Read(ByteReader& r, CompareAndSetRequest& m) {
    return r.Bytes(&m.key) && r.Bytes(&m.expected) && r.Bytes(&m.desired);
  }

  static void Write(ByteWriter& w, const DeleteRequest& m) { w.Bytes(m.key); }
  static bool Read(ByteReader& r, DeleteRequest& m) { return r.Bytes(&m.key); }

  static void Write(ByteWriter& w, const ReportRequest& m) {
    w.I32(m.rank);
    w.Bytes(m.json);
  }
  static bool Read(ByteReader& r, ReportRequest& m) { return r.I32(&m.rank) && r.Bytes(&m.json); }

  static void Write(ByteWriter& w, const TimelineRequest& m) {
    w.I32(m.rank);
    w.U64(m.offset);
    w.Bytes(m.data);
  }
  static bool Read(ByteReader& r, TimelineRequest& m) {
    return r.I32(&m.rank) && r.U64(&m.offset) && r.Bytes(&m.data);
  }

  static void Write(ByteWriter&, const OkResponse&) {}
  static bool Read(ByteReader&, OkResponse&) { return true; }

  static void Write(ByteWriter& w, const ValueResponse& m) { w.Bytes(m.value); }
  static bool Read(ByteReader& r, ValueResponse& m) { return r.Bytes(&m.value); }

  static void Write(ByteWriter& w, const IntResponse& m) { w.U64(static_cast<uint64_t>(m.value)); }
  static bool Read(ByteReader& r, IntResponse& m) {
    uint64_t value = 0;
    if (!r.U64(&value)) return false;
    m.value = static_cast<int64_t>(value);
    return true;
  }

  static void Write(ByteWriter& w, const ErrorResponse& m) { w.Bytes(m.message); }
  static bool Read(ByteReader& r, ErrorResponse& m) { return r.Bytes(&m.message); }
};

constexpr framing::MessageCodec<Message, MessageType, RendezvousFields> kCodec({{
    {MessageType::kChallenge, "Challenge"},
    {MessageType::kProof, "Proof"},
    {MessageType::kWelcome, "Welcome"},
    {MessageType::kSetRequest, "SetRequest"},
    {MessageType::kGetRequest, "GetRequest"},
    {MessageType::kWaitRequest, "WaitRequest"},
    {MessageType::kAddRequest, "AddRequest"},
    {MessageType::kCompareAndSetRequest, "CompareAndSetRequest"},
    {MessageType::kDeleteRequest, "DeleteRequest"},
    {MessageType::kReportRequest, "ReportRequest"},
    {MessageType::kTimelineRequest, "TimelineRequest"},
    {MessageType::kOkResponse, "OkResponse"},
    {MessageType::kValueResponse, "ValueResponse"},
    {MessageType::kIntResponse, "IntResponse"},
    {MessageType::kErrorResponse, "ErrorResponse"},
}});

}  // namespace

bool IsRequest(const Message& message) {
  return std::holds_alternative<SetRequest>(message) || std::holds_alternative<GetRequest>(message) ||
         std::holds_alternative<WaitRequest>(message) || std::holds_alternative<AddRequest>(message) ||
         std::holds_alternative<CompareAndSetRequest>(message) ||
         std::holds_alternative<DeleteRequest>(message) || std::holds_alternative<ReportRequest>(message) ||
         std::holds_alternative<TimelineRequest>(message);
}

std::chrono::milliseconds WaitTimeout(const Message& message) {
  if (const auto* get = std::get_if<GetRequest>(&message)) {
    return std::chrono::milliseconds(get->timeout_ms);
  }
  if (const auto* wait = std::get_if<WaitRequest>(&message)) {
    return std::chrono::milliseconds(wait->timeout_ms);
  }
  return std::chrono::milliseconds(0);
}

std::string_view MessageName(const Message& message) { return kCodec.Name(message); }

std::string EncodeFrame(const Message& message) { return kCodec.EncodeFrame(message); }

StatusOr<Message> DecodeMessage(uint8_t type, std::string_view fields) { return kCodec.Decode(type, fields); }

}  // namespace hvdrun::rendezvous
