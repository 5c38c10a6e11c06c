// The control protocol between the launcher (hvdrun) and an agent (hvdrun-agent), spoken over the
// agent's stdin (launcher -> agent) and stdout (agent -> launcher): a pipe for a local agent, an
// SSH channel for a remote one. docs/protocol.md is the reference; this header is its code.
//
// Framing is common/protocol/framing.h's, with frames of at most kMaxFrameBytes. A message must use all of
// its bytes, except Hello and AgentHello, whose trailing bytes (fields a later protocol version
// adds) are ignored so that their versions can always be compared. Anything else is a protocol
// error, which ends the connection.
//
// The conversation: launcher sends Hello; agent answers AgentHello (or AgentError and exits);
// launcher sends Launch; agent sends RankStarted, RankOutput and RankExited for each rank and
// Heartbeat while idle, and RankProgress for each running rank every progress period; launcher may
// send Terminate (agent stops its ranks), Heartbeat and ProgressRequest (the agent answers at once
// with a RankProgress per rank). When the agent's stdin closes, it stops its ranks and exits.
#ifndef HVDRUN_COMMON_PROTOCOL_AGENT_PROTOCOL_H_
#define HVDRUN_COMMON_PROTOCOL_AGENT_PROTOCOL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/host/network_interfaces.h"
#include "common/protocol/framing.h"
#include "hvdrun/status.h"

namespace hvdrun::protocol {

// Bumped whenever a message changes shape; launcher and agent must agree exactly.
inline constexpr uint32_t kProtocolVersion = 4;
// Largest frame either side accepts. Output lines are cut into pieces well below this.
inline constexpr uint32_t kMaxFrameBytes = 16u << 20;
// First field of Hello and AgentHello, so that a stream that is not hvdrun's (a login banner, a
// shell error) is recognised at once.
inline constexpr std::string_view kMagic = "hvdrun-agent-protocol";

enum class MessageType : uint8_t {
  kHello = 1,
  kAgentHello = 2,
  kLaunch = 3,
  kRankStarted = 4,
  kRankOutput = 5,
  kRankExited = 6,
  kHeartbeat = 7,
  kTerminate = 8,
  kAgentError = 9,
  kRankProgress = 10,
  kProgressRequest = 11,
};

// launcher -> agent, first message.
struct Hello {
  uint32_t protocol_version = kProtocolVersion;
  std::string hvdrun_version;
  // The agent sends a Heartbeat at this interval, and gives up on a launcher that has sent
  // nothing for heartbeat_timeout_ms (0 disables that check).
  uint32_t heartbeat_interval_ms = 0;
  uint32_t heartbeat_timeout_ms = 0;
  // Whether AgentHello must carry the host's facts (for --results and --check): gathering them
  // runs a few programs on the host, so a plain launch does not ask.
  bool want_facts = false;
  bool operator==(const Hello&) const = default;
};

// One fact about the agent's host ("kernel", "Linux 6.1.0-18-amd64 x86_64", "uname"): the keys
// are common/host/host_facts.h's; `source` says where the value was read, or why it is not found.
struct HostFact {
  std::string key;
  std::string value;
  std::string source;
  bool operator==(const HostFact&) const = default;
};

// agent -> launcher, the answer to Hello.
struct AgentHello {
  uint32_t protocol_version = kProtocolVersion;
  std::string hvdrun_version;
  std::string hostname;  // gethostname() of the agent's host
  int32_t pid = 0;
  // A TCP port that was free on the agent's host when it answered (for MASTER_PORT).
  uint16_t free_port = 0;
  // The host's facts, when Hello asked for them; empty otherwise.
  std::vector<HostFact> facts{};
  // Every IPv4 address of the host's interfaces that are up (since protocol 3), from which the
  // launcher picks the host's address on --network-interface.
  std::vector<InterfaceAddress> interfaces{};
  bool operator==(const AgentHello&) const = default;
};

struct RankLaunch {
  int32_t rank = 0;
  std::vector<std::string> argv;  // argv[0] is looked up in PATH; never passed through a shell
  std::vector<std::string> env;   // NAME=VALUE entries set on top of the agent's environment
  std::string working_dir;
  bool operator==(const RankLaunch&) const = default;
};

// launcher -> agent: start these ranks.
struct Launch {
  // After Terminate (or a lost launcher) ranks get SIGTERM, then SIGKILL after this long.
  uint32_t kill_grace_ms = 0;
  std::vector<RankLaunch> ranks;
  bool operator==(const Launch&) const = default;
};

struct RankStarted {
  int32_t rank = 0;
  int32_t pid = 0;
  bool operator==(const RankStarted&) const = default;
};

enum class OutputStream : uint8_t { kStdout = 1, kStderr = 2 };

// One line of a rank's output, or a piece of a line longer than the agent's line limit.
struct RankOutput {
  int32_t rank = 0;
  OutputStream stream = OutputStream::kStdout;
  // Whether the rank wrote a newline after `data`; false for a piece of a long line and for a
  // last line without a newline.
  bool newline = true;
  std::string data;  // bytes as written, without the newline
  bool operator==(const RankOutput&) const = default;
};

enum class SpawnError : uint8_t {
  kNone = 0,
  kNotFound = 1,       // argv[0] does not exist (exit code 127, as in a shell)
  kNotExecutable = 2,  // argv[0] exists but cannot be executed (126)
  kWorkingDir = 3,     // the working directory cannot be entered
  kOther = 4,
};

struct RankExited {
  int32_t rank = 0;
  int32_t exit_code = 0;  // valid when signal == 0
  int32_t signal = 0;     // the signal that ended the rank, or 0
  // Set when the rank never ran; `error` then says why in one line.
  SpawnError spawn_error = SpawnError::kNone;
  std::string error;
  bool operator==(const RankExited&) const = default;
};

struct Heartbeat {
  bool operator==(const Heartbeat&) const = default;
};

// launcher -> agent: stop every rank: SIGTERM, then SIGKILL after kill_grace_ms, or SIGKILL at
// once when `immediate` (a user's second Ctrl-C).
struct Terminate {
  bool immediate = false;
  bool operator==(const Terminate&) const = default;
};

// agent -> launcher: the agent cannot go on; `message` is one line. The agent exits after it.
struct AgentError {
  std::string message;
  bool operator==(const AgentError&) const = default;
};

// The state of a rank's process as its agent sees it (/proc/<pid>/stat, and waitpid on its child).
enum class ProcessState : uint8_t {
  kUnknown = 0,   // not started yet, or /proc could not be read
  kRunning = 1,   // R
  kSleeping = 2,  // S, or I (idle kernel wait)
  kDiskWait = 3,  // D: uninterruptible, usually I/O
  kStopped = 4,   // T: stopped by a signal (stop_signal says which, when known)
  kTraced = 5,    // t: stopped by a debugger
  kZombie = 6,    // Z: ended, not yet reaped
  kExited = 7,    // reaped: the agent has sent or is about to send RankExited
};

// Where one collective has got to in a rank's runtime; each phase follows the one before it, and
// kFailed may follow any of them.
enum class CollectivePhase : uint8_t {
  kSubmitted = 1,   // the rank's code asked for it
  kNegotiated = 2,  // every rank submitted it; it is ready to run
  kInBackend = 3,   // it is running in Gloo, MPI, NCCL or shared memory
  kDone = 4,
  kFailed = 5,
};

// One collective of a rank's flight recorder (its last N collectives). A time is 0 for a phase not
// reached.
struct FlightRecord {
  uint64_t sequence = 0;  // 1 for the rank's first collective, then one more for each
  std::string name{};     // the tensor's name ("grad.layer4.1.conv2", "allreduce.noname.3")
  std::string op{};       // "allreduce", "allgather", "broadcast", ...
  uint64_t bytes = 0;
  int32_t process_set = 0;
  CollectivePhase phase = CollectivePhase::kSubmitted;
  int64_t submitted_unix_ms = 0;
  int64_t negotiated_unix_ms = 0;
  int64_t backend_unix_ms = 0;
  int64_t done_unix_ms = 0;  // done or failed
  bool operator==(const FlightRecord&) const = default;
};

// agent -> launcher: how far a rank has got, every progress period, in answer to ProgressRequest,
// and once more (with records) just before RankExited of a rank that did not exit 0. The board_*
// fields come from the rank's progress board (common/progress/); they are zero when board_read is
// false (the rank publishes none, or has not mapped it yet). Times are unix milliseconds.
struct RankProgress {
  int32_t rank = 0;
  int32_t pid = 0;
  ProcessState state = ProcessState::kUnknown;
  int32_t stop_signal = 0;          // with kStopped: the signal that stopped it, 0 when not known
  int64_t state_since_unix_ms = 0;  // when the agent first saw the rank in `state`
  bool board_read = false;
  uint64_t completed = 0;  // collectives done
  uint64_t failed = 0;     // collectives failed
  std::string last_completed_name{};
  int64_t last_completed_unix_ms = 0;
  uint64_t pending = 0;  // submitted and not done or failed
  std::string oldest_pending_name{};
  int64_t oldest_pending_since_unix_ms = 0;
  bool in_backend = false;
  std::string backend_name{};
  std::string backend_op{};
  uint64_t backend_bytes = 0;
  int64_t backend_since_unix_ms = 0;
  int32_t process_set = 0;
  // The flight recorder, oldest first: only in answer to ProgressRequest{with_recorder} and in the
  // last RankProgress of a rank that failed.
  std::vector<FlightRecord> records{};
  bool operator==(const RankProgress&) const = default;
};

// launcher -> agent: answer at once with one RankProgress per running rank, with its flight
// recorder's records when `with_recorder`.
struct ProgressRequest {
  bool with_recorder = false;
  bool operator==(const ProgressRequest&) const = default;
};

using Message = std::variant<Hello, AgentHello, Launch, RankStarted, RankOutput, RankExited, Heartbeat,
                             Terminate, AgentError, RankProgress, ProgressRequest>;

// Name of the message's type, for error messages ("Launch").
std::string_view MessageName(const Message& message);

// The whole frame: length, type and fields.
std::string EncodeFrame(const Message& message);

// The bytes `rank` takes in a Launch frame, so that a launcher can tell, rank by rank and before
// it sends anything, whether a host's Launch stays within kMaxFrameBytes.
size_t EncodedSize(const RankLaunch& rank);

// Decodes one message from its type byte and fields.
StatusOr<Message> DecodeMessage(uint8_t type, std::string_view fields);

// Reassembles messages from a byte stream that arrives in arbitrary pieces (common/protocol/framing.h);
// pending() shows what a peer that is not hvdrun's sent.
using FrameDecoder = framing::FrameDecoder<Message, DecodeMessage, kMaxFrameBytes>;

}  // namespace hvdrun::protocol

#endif  // HVDRUN_COMMON_PROTOCOL_AGENT_PROTOCOL_H_
