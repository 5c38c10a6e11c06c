#include "common/protocol/agent_protocol.h"

#include "common/protocol/byte_codec.h"

namespace hvdrun::protocol {
namespace {

// The fields of each message, as framing::MessageCodec takes them: Write encodes them, Read decodes
// them and returns false when they are malformed.
struct AgentFields {
  static void Write(ByteWriter& w, const Hello& m) {
    w.Bytes(kMagic);
    w.U32(m.protocol_version);
    w.Bytes(m.hvdrun_version);
    w.U32(m.heartbeat_interval_ms);
    w.U32(m.heartbeat_timeout_ms);
    w.U8(m.want_facts ? 1 : 0);
  }
  static bool Read(ByteReader& r, Hello& m) {
    std::string magic;
    // want_facts came with protocol 2; a version-1 Hello ends before it, and still decodes so that
    // the versions can be compared.
    return r.Bytes(&magic) && magic == kMagic && r.U32(&m.protocol_version) && r.Bytes(&m.hvdrun_version) &&
           r.U32(&m.heartbeat_interval_ms) && r.U32(&m.heartbeat_timeout_ms) &&
           (r.AtEnd() || r.Bool(&m.want_facts));
  }

  static void Write(ByteWriter& w, const AgentHello& m) {
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
  static bool Read(ByteReader& r, AgentHello& m) {
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

  static void Write(ByteWriter& w, const Launch& m) {
    w.U32(m.kill_grace_ms);
    w.U32(static_cast<uint32_t>(m.ranks.size()));
    for (const RankLaunch& rank : m.ranks) {
      w.I32(rank.rank);
      w.BytesList(rank.argv);
      w.BytesList(rank.env);
      w.Bytes(rank.working_dir);
    }
  }
  static bool Read(ByteReader& r, Launch& m) {
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

  static void Write(ByteWriter& w, const RankStarted& m) {
    w.I32(m.rank);
    w.I32(m.pid);
  }
  static bool Read(ByteReader& r, RankStarted& m) { return r.I32(&m.rank) && r.I32(&m.pid); }

  static void Write(ByteWriter& w, const RankOutput& m) {
    w.I32(m.rank);
    w.U8(static_cast<uint8_t>(m.stream));
    w.U8(m.newline ? 1 : 0);
    w.Bytes(m.data);
  }
  static bool Read(ByteReader& r, RankOutput& m) {
    uint8_t stream = 0;
    if (!r.I32(&m.rank) || !r.U8(&stream) || !r.Bool(&m.newline) || !r.Bytes(&m.data)) return false;
    if (stream != static_cast<uint8_t>(OutputStream::kStdout) &&
        stream != static_cast<uint8_t>(OutputStream::kStderr)) {
      return false;
    }
    m.stream = static_cast<OutputStream>(stream);
    return true;
  }

  static void Write(ByteWriter& w, const RankExited& m) {
    w.I32(m.rank);
    w.I32(m.exit_code);
    w.I32(m.signal);
    w.U8(static_cast<uint8_t>(m.spawn_error));
    w.Bytes(m.error);
  }
  static bool Read(ByteReader& r, RankExited& m) {
    uint8_t spawn_error = 0;
    if (!r.I32(&m.rank) || !r.I32(&m.exit_code) || !r.I32(&m.signal) || !r.U8(&spawn_error) ||
        !r.Bytes(&m.error)) {
      return false;
    }
    if (spawn_error > static_cast<uint8_t>(SpawnError::kOther)) return false;
    m.spawn_error = static_cast<SpawnError>(spawn_error);
    return true;
  }

  static void Write(ByteWriter&, const Heartbeat&) {}
  static bool Read(ByteReader&, Heartbeat&) { return true; }

  static void Write(ByteWriter& w, const Terminate& m) { w.U8(m.immediate ? 1 : 0); }
  static bool Read(ByteReader& r, Terminate& m) { return r.Bool(&m.immediate); }

  static void Write(ByteWriter& w, const AgentError& m) { w.Bytes(m.message); }
  static bool Read(ByteReader& r, AgentError& m) { return r.Bytes(&m.message); }
};

// Hello and AgentHello may carry fields that a later protocol version appends; they are ignored, so
// that the versions these messages carry can always be read and a mismatch reported.
constexpr framing::MessageCodec<Message, MessageType, AgentFields> kCodec({{
    {MessageType::kHello, "Hello", /*extensible=*/true},
    {MessageType::kAgentHello, "AgentHello", /*extensible=*/true},
    {MessageType::kLaunch, "Launch"},
    {MessageType::kRankStarted, "RankStarted"},
    {MessageType::kRankOutput, "RankOutput"},
    {MessageType::kRankExited, "RankExited"},
    {MessageType::kHeartbeat, "Heartbeat"},
    {MessageType::kTerminate, "Terminate"},
    {MessageType::kAgentError, "AgentError"},
}});

}  // namespace

std::string_view MessageName(const Message& message) { return kCodec.Name(message); }

std::string EncodeFrame(const Message& message) { return kCodec.EncodeFrame(message); }

StatusOr<Message> DecodeMessage(uint8_t type, std::string_view fields) { return kCodec.Decode(type, fields); }

}  // namespace hvdrun::protocol
