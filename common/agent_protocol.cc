#include "common/agent_protocol.h"

#include <type_traits>

#include "common/byte_codec.h"

namespace hvdrun::protocol {
namespace {

// Encode/Decode pairs, one per message. Decode returns false when the fields are malformed.

void Encode(ByteWriter& w, const Hello& m) {
  w.Bytes(kMagic);
  w.U32(m.protocol_version);
  w.Bytes(m.hvdrun_version);
  w.U32(m.heartbeat_interval_ms);
  w.U32(m.heartbeat_timeout_ms);
  w.U8(m.want_facts ? 1 : 0);
}
bool Decode(ByteReader& r, Hello& m) {
  std::string magic;
  // want_facts came with protocol 2; a version-1 Hello ends before it, and still decodes so that
  // the versions can be compared.
  return r.Bytes(&magic) && magic == kMagic && r.U32(&m.protocol_version) && r.Bytes(&m.hvdrun_version) &&
         r.U32(&m.heartbeat_interval_ms) && r.U32(&m.heartbeat_timeout_ms) &&
         (r.AtEnd() || r.Bool(&m.want_facts));
}

void Encode(ByteWriter& w, const AgentHello& m) {
  w.Bytes(kMagic);
  w.U32(m.protocol_version);
  w.Bytes(m.hvdrun_version);
  w.Bytes(m.hostname);
  w.I32(m.pid);
  w.U16(m.free_port);
  w.U32(static_cast<uint32_t>(m.facts.size()));
  for (const HostFact& fact : m.facts) {
    w.Bytes(fact.key);
    w.Bytes(fact.value);
    w.Bytes(fact.source);
  }
  w.U32(static_cast<uint32_t>(m.interfaces.size()));
  for (const InterfaceAddress& interface : m.interfaces) {
    w.Bytes(interface.name);
    w.Bytes(interface.address);
  }
}
bool Decode(ByteReader& r, AgentHello& m) {
  std::string magic;
  if (!r.Bytes(&magic) || magic != kMagic || !r.U32(&m.protocol_version) || !r.Bytes(&m.hvdrun_version) ||
      !r.Bytes(&m.hostname) || !r.I32(&m.pid) || !r.U16(&m.free_port)) {
    return false;
  }
  // facts came with protocol 2 (see Hello).
  if (r.AtEnd()) return true;
  uint32_t count = 0;
  // A fact takes at least 12 bytes (three string lengths).
  if (!r.U32(&count) || count > r.remaining() / 12) return false;
  m.facts.resize(count);
  for (HostFact& fact : m.facts) {
    if (!r.Bytes(&fact.key) || !r.Bytes(&fact.value) || !r.Bytes(&fact.source)) return false;
  }
  // interfaces came with protocol 3.
  if (r.AtEnd()) return true;
  // An interface takes at least 8 bytes (two string lengths).
  if (!r.U32(&count) || count > r.remaining() / 8) return false;
  m.interfaces.resize(count);
  for (InterfaceAddress& interface : m.interfaces) {
    if (!r.Bytes(&interface.name) || !r.Bytes(&interface.address)) return false;
  }
  return true;
}

void Encode(ByteWriter& w, const Launch& m) {
  w.U32(m.kill_grace_ms);
  w.U32(static_cast<uint32_t>(m.ranks.size()));
  for (const RankLaunch& rank : m.ranks) {
    w.I32(rank.rank);
    w.BytesList(rank.argv);
    w.BytesList(rank.env);
    w.Bytes(rank.working_dir);
  }
}
bool Decode(ByteReader& r, Launch& m) {
  uint32_t count = 0;
  // A rank takes at least 16 bytes (rank, two list counts, a string length).
  if (!r.U32(&m.kill_grace_ms) || !r.U32(&count) || count > r.remaining() / 16) return false;
  m.ranks.resize(count);
  for (RankLaunch& rank : m.ranks) {
    if (!r.I32(&rank.rank) || !r.BytesList(&rank.argv) || !r.BytesList(&rank.env) ||
        !r.Bytes(&rank.working_dir)) {
      return false;
    }
  }
  return true;
}

void Encode(ByteWriter& w, const RankStarted& m) {
  w.I32(m.rank);
  w.I32(m.pid);
}
bool Decode(ByteReader& r, RankStarted& m) { return r.I32(&m.rank) && r.I32(&m.pid); }

void Encode(ByteWriter& w, const RankOutput& m) {
  w.I32(m.rank);
  w.U8(static_cast<uint8_t>(m.stream));
  w.U8(m.newline ? 1 : 0);
  w.Bytes(m.data);
}
bool Decode(ByteReader& r, RankOutput& m) {
  uint8_t stream = 0;
  if (!r.I32(&m.rank) || !r.U8(&stream) || !r.Bool(&m.newline) || !r.Bytes(&m.data)) return false;
  if (stream != static_cast<uint8_t>(OutputStream::kStdout) &&
      stream != static_cast<uint8_t>(OutputStream::kStderr)) {
    return false;
  }
  m.stream = static_cast<OutputStream>(stream);
  return true;
}

void Encode(ByteWriter& w, const RankExited& m) {
  w.I32(m.rank);
  w.I32(m.exit_code);
  w.I32(m.signal);
  w.U8(static_cast<uint8_t>(m.spawn_error));
  w.Bytes(m.error);
}
bool Decode(ByteReader& r, RankExited& m) {
  uint8_t spawn_error = 0;
  if (!r.I32(&m.rank) || !r.I32(&m.exit_code) || !r.I32(&m.signal) || !r.U8(&spawn_error) ||
      !r.Bytes(&m.error)) {
    return false;
  }
  if (spawn_error > static_cast<uint8_t>(SpawnError::kOther)) return false;
  m.spawn_error = static_cast<SpawnError>(spawn_error);
  return true;
}

void Encode(ByteWriter&, const Heartbeat&) {}
bool Decode(ByteReader&, Heartbeat&) { return true; }

void Encode(ByteWriter& w, const Terminate& m) { w.U8(m.immediate ? 1 : 0); }
bool Decode(ByteReader& r, Terminate& m) { return r.Bool(&m.immediate); }

void Encode(ByteWriter& w, const AgentError& m) { w.Bytes(m.message); }
bool Decode(ByteReader& r, AgentError& m) { return r.Bytes(&m.message); }

template <typename T>
constexpr MessageType TypeOf() {
  if constexpr (std::is_same_v<T, Hello>) return MessageType::kHello;
  if constexpr (std::is_same_v<T, AgentHello>) return MessageType::kAgentHello;
  if constexpr (std::is_same_v<T, Launch>) return MessageType::kLaunch;
  if constexpr (std::is_same_v<T, RankStarted>) return MessageType::kRankStarted;
  if constexpr (std::is_same_v<T, RankOutput>) return MessageType::kRankOutput;
  if constexpr (std::is_same_v<T, RankExited>) return MessageType::kRankExited;
  if constexpr (std::is_same_v<T, Heartbeat>) return MessageType::kHeartbeat;
  if constexpr (std::is_same_v<T, Terminate>) return MessageType::kTerminate;
  if constexpr (std::is_same_v<T, AgentError>) return MessageType::kAgentError;
}

// Hello and AgentHello may carry fields that a later protocol version appends; they are ignored,
// so that the versions these messages carry can always be read and a mismatch reported.
template <typename T>
constexpr bool kExtensible = std::is_same_v<T, Hello> || std::is_same_v<T, AgentHello>;

// Decodes a message of type T, requiring that its fields use every byte (but see kExtensible).
template <typename T>
StatusOr<Message> DecodeAs(std::string_view fields, std::string_view name) {
  ByteReader reader(fields);
  T message;
  if (!Decode(reader, message)) return Status::Error("malformed " + std::string(name) + " message");
  if (!kExtensible<T> && !reader.AtEnd()) {
    return Status::Error(std::string(name) + " message has " + std::to_string(reader.remaining()) +
                         " extra bytes");
  }
  return Message(std::move(message));
}

}  // namespace

std::string_view MessageName(const Message& message) {
  static constexpr std::string_view kNames[] = {"Hello",       "AgentHello", "Launch",
                                                "RankStarted", "RankOutput", "RankExited",
                                                "Heartbeat",   "Terminate",  "AgentError"};
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
    case MessageType::kHello:
      return DecodeAs<Hello>(fields, "Hello");
    case MessageType::kAgentHello:
      return DecodeAs<AgentHello>(fields, "AgentHello");
    case MessageType::kLaunch:
      return DecodeAs<Launch>(fields, "Launch");
    case MessageType::kRankStarted:
      return DecodeAs<RankStarted>(fields, "RankStarted");
    case MessageType::kRankOutput:
      return DecodeAs<RankOutput>(fields, "RankOutput");
    case MessageType::kRankExited:
      return DecodeAs<RankExited>(fields, "RankExited");
    case MessageType::kHeartbeat:
      return DecodeAs<Heartbeat>(fields, "Heartbeat");
    case MessageType::kTerminate:
      return DecodeAs<Terminate>(fields, "Terminate");
    case MessageType::kAgentError:
      return DecodeAs<AgentError>(fields, "AgentError");
  }
  return Status::Error("unknown message type " + std::to_string(type));
}

StatusOr<std::optional<Message>> FrameDecoder::Next() {
  std::string_view rest = pending();
  ByteReader header(rest);
  uint32_t length = 0;
  if (!header.U32(&length)) return std::optional<Message>();
  if (length == 0) return Status::Error("empty frame (length 0)");
  if (length > kMaxFrameBytes) {
    return Status::Error("frame of " + std::to_string(length) + " bytes exceeds the limit of " +
                         std::to_string(kMaxFrameBytes));
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

}  // namespace hvdrun::protocol
