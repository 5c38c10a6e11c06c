#include "common/protocol/agent_protocol.h"

#include "common/protocol/byte_codec.h"

namespace hvdrun::protocol {
namespace {

// The fields of each message, as framing::MessageCodec takes them: Write encodes them, Read decodes
// them and returns false when they are malformed.
struct AgentFields {
  // How Hello and AgentHello start, in every protocol version, so that a peer of any version can
  // read the versions and report a mismatch: the magic, the protocol's version, hvdrun's.
  template <typename Greeting>
  static void WriteVersions(ByteWriter& w, const Greeting& m) {
    w.Bytes(kMagic);
    w.U32(m.protocol_version);
    w.Bytes(m.hvdrun_version);
  }
  template <typename Greeting>
  static bool ReadVersions(ByteReader& r, Greeting& m) {
    return r.Expect(kMagic) && r.U32(&m.protocol_version) && r.Bytes(&m.hvdrun_version);
  }

  static void Write(ByteWriter& w, const Hello& m) {
    WriteVersions(w, m);
    w.U32(m.heartbeat_interval_ms);
    w.U32(m.heartbeat_timeout_ms);
    w.U8(m.want_facts ? 1 : 0);
  }
  static bool Read(ByteReader& r, Hello& m) {
    // want_facts came with protocol 2; a version-1 Hello ends before it, and still decodes so that
    // the versions can be compared.
    return ReadVersions(r, m) && r.U32(&m.heartbeat_interval_ms) && r.U32(&m.heartbeat_timeout_ms) &&
           (r.AtEnd() || r.Bool(&m.want_facts));
  }

  static void Write(ByteWriter& w, const AgentHello& m) {
    WriteVersions(w, m);
    w.Bytes(m.hostname);
    w.I32(m.pid);
    w.U16(m.free_port);
    w.List(m.facts, [](ByteWriter& out, const HostFact& fact) {
      out.Bytes(fact.key);
      out.Bytes(fact.value);
      out.Bytes(fact.source);
    });
    w.List(m.interfaces, [](ByteWriter& out, const InterfaceAddress& interface) {
      out.Bytes(interface.name);
      out.Bytes(interface.address);
    });
  }
  static bool Read(ByteReader& r, AgentHello& m) {
    if (!ReadVersions(r, m) || !r.Bytes(&m.hostname) || !r.I32(&m.pid) || !r.U16(&m.free_port)) {
      return false;
    }
    // facts came with protocol 2 (see Hello). A fact takes at least 12 bytes (three string lengths).
    if (r.AtEnd()) return true;
    if (!r.List(&m.facts, 12, [](ByteReader& in, HostFact& fact) {
          return in.Bytes(&fact.key) && in.Bytes(&fact.value) && in.Bytes(&fact.source);
        })) {
      return false;
    }
    // interfaces came with protocol 3. An interface takes at least 8 bytes (two string lengths).
    if (r.AtEnd()) return true;
    return r.List(&m.interfaces, 8, [](ByteReader& in, InterfaceAddress& interface) {
      return in.Bytes(&interface.name) && in.Bytes(&interface.address);
    });
  }

  static void Write(ByteWriter& w, const RankLaunch& rank) {
    w.I32(rank.rank);
    w.BytesList(rank.argv);
    w.BytesList(rank.env);
    w.Bytes(rank.working_dir);
  }
  static void Write(ByteWriter& w, const Launch& m) {
    w.U32(m.kill_grace_ms);
    w.List(m.ranks, [](ByteWriter& out, const RankLaunch& rank) { Write(out, rank); });
  }
  static bool Read(ByteReader& r, Launch& m) {
    // A rank takes at least 16 bytes (rank, two list counts, a string length).
    return r.U32(&m.kill_grace_ms) && r.List(&m.ranks, 16, [](ByteReader& in, RankLaunch& rank) {
      return in.I32(&rank.rank) && in.BytesList(&rank.argv) && in.BytesList(&rank.env) &&
             in.Bytes(&rank.working_dir);
    });
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

  static void Write(ByteWriter& w, const FlightRecord& m) {
    w.U64(m.sequence);
    w.Bytes(m.name);
    w.Bytes(m.op);
    w.U64(m.bytes);
    w.I32(m.process_set);
    w.U8(static_cast<uint8_t>(m.phase));
    for (int64_t time : {m.submitted_unix_ms, m.negotiated_unix_ms, m.backend_unix_ms, m.done_unix_ms}) {
      w.I64(time);
    }
  }
  static bool Read(ByteReader& r, FlightRecord& m) {
    uint8_t phase = 0;
    if (!r.U64(&m.sequence) || !r.Bytes(&m.name) || !r.Bytes(&m.op) || !r.U64(&m.bytes) ||
        !r.I32(&m.process_set) || !r.U8(&phase) || !r.I64(&m.submitted_unix_ms) ||
        !r.I64(&m.negotiated_unix_ms) || !r.I64(&m.backend_unix_ms) || !r.I64(&m.done_unix_ms)) {
      return false;
    }
    if (phase < static_cast<uint8_t>(CollectivePhase::kSubmitted) ||
        phase > static_cast<uint8_t>(CollectivePhase::kFailed)) {
      return false;
    }
    m.phase = static_cast<CollectivePhase>(phase);
    return true;
  }

  static void Write(ByteWriter& w, const RankProgress& m) {
    w.I32(m.rank);
    w.I32(m.pid);
    w.U8(static_cast<uint8_t>(m.state));
    w.I32(m.stop_signal);
    w.I64(m.state_since_unix_ms);
    w.U8(m.board_read ? 1 : 0);
    w.U64(m.completed);
    w.U64(m.failed);
    w.Bytes(m.last_completed_name);
    w.I64(m.last_completed_unix_ms);
    w.U64(m.pending);
    w.Bytes(m.oldest_pending_name);
    w.I64(m.oldest_pending_since_unix_ms);
    w.U8(m.in_backend ? 1 : 0);
    w.Bytes(m.backend_name);
    w.Bytes(m.backend_op);
    w.U64(m.backend_bytes);
    w.I64(m.backend_since_unix_ms);
    w.I32(m.process_set);
    w.List(m.records, [](ByteWriter& out, const FlightRecord& record) { Write(out, record); });
  }
  static bool Read(ByteReader& r, RankProgress& m) {
    uint8_t state = 0;
    if (!r.I32(&m.rank) || !r.I32(&m.pid) || !r.U8(&state) || !r.I32(&m.stop_signal) ||
        !r.I64(&m.state_since_unix_ms) || !r.Bool(&m.board_read) || !r.U64(&m.completed) ||
        !r.U64(&m.failed) || !r.Bytes(&m.last_completed_name) || !r.I64(&m.last_completed_unix_ms) ||
        !r.U64(&m.pending) || !r.Bytes(&m.oldest_pending_name) || !r.I64(&m.oldest_pending_since_unix_ms) ||
        !r.Bool(&m.in_backend) || !r.Bytes(&m.backend_name) || !r.Bytes(&m.backend_op) ||
        !r.U64(&m.backend_bytes) || !r.I64(&m.backend_since_unix_ms) || !r.I32(&m.process_set)) {
      return false;
    }
    if (state > static_cast<uint8_t>(ProcessState::kExited)) return false;
    m.state = static_cast<ProcessState>(state);
    // A record takes at least 61 bytes (two string lengths and its fixed-width fields).
    return r.List(&m.records, kFlightRecordMinBytes,
                  [](ByteReader& in, FlightRecord& record) { return Read(in, record); });
  }

  static void Write(ByteWriter& w, const ProgressRequest& m) { w.U8(m.with_recorder ? 1 : 0); }
  static bool Read(ByteReader& r, ProgressRequest& m) { return r.Bool(&m.with_recorder); }

  // u64 sequence, two u32 string lengths, u64 bytes, i32 process set, u8 phase, four i64 times.
  static constexpr size_t kFlightRecordMinBytes = 8 + 4 + 4 + 8 + 4 + 1 + 4 * 8;
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
    {MessageType::kRankProgress, "RankProgress"},
    {MessageType::kProgressRequest, "ProgressRequest"},
}});

}  // namespace

std::string_view MessageName(const Message& message) { return kCodec.Name(message); }

std::string EncodeFrame(const Message& message) { return kCodec.EncodeFrame(message); }

size_t EncodedSize(const RankLaunch& rank) {
  ByteWriter writer;
  AgentFields::Write(writer, rank);
  return writer.data().size();
}

StatusOr<Message> DecodeMessage(uint8_t type, std::string_view fields) { return kCodec.Decode(type, fields); }

}  // namespace hvdrun::protocol
