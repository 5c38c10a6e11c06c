// The wire protocol of hvdrun's rendezvous and collector service (launcher/rendezvous/rendezvous_server.h),
// spoken over TCP between the service and its clients (common/protocol/rendezvous_client.h).
// docs/protocol.md, "Rendezvous service", is the reference; this header is its code.
//
// Framing is common/protocol/framing.h's, the agent protocol's too, with frames of at most kMaxFrameBytes, or
// kMaxHandshakeFrameBytes before a connection is authenticated. Every message must use all of its
// bytes. Anything else is a protocol error, which ends the connection.
//
// The conversation: the service sends Challenge (a random nonce); the client answers Proof
// (HMAC-SHA256 of nonce || "client" keyed with the job secret); the service answers Welcome (its own
// proof, of nonce || "server") or ErrorResponse and closes. Then the client sends one request at a
// time and reads its response (OkResponse, ValueResponse, IntResponse or ErrorResponse).
//
// Nothing here is thread-safe; every function is reentrant.
#ifndef HVDRUN_COMMON_PROTOCOL_RENDEZVOUS_PROTOCOL_H_
#define HVDRUN_COMMON_PROTOCOL_RENDEZVOUS_PROTOCOL_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/protocol/framing.h"
#include "hvdrun/status.h"

namespace hvdrun::rendezvous {

// Bumped whenever a message changes shape; service and clients must agree exactly.
inline constexpr uint32_t kProtocolVersion = 2;
// First field of Challenge and Proof, so that a peer that is not hvdrun's is recognised at once.
inline constexpr std::string_view kMagic = "hvdrun-rendezvous";
// Largest frame either side accepts once authenticated: a 64 MiB report plus room for its fields.
inline constexpr uint32_t kMaxFrameBytes = (64u << 20) + (64u << 10);
// Largest frame the service accepts before authentication (a Proof is under 128 bytes), so that an
// unauthenticated peer cannot make it buffer much.
inline constexpr uint32_t kMaxHandshakeFrameBytes = 1024;
// Suffixes of the nonce in the client's and the service's proofs.
inline constexpr std::string_view kClientProofSuffix = "client";
inline constexpr std::string_view kServerProofSuffix = "server";

enum class MessageType : uint8_t {
  kChallenge = 1,
  kProof = 2,
  kWelcome = 3,
  kSetRequest = 10,
  kGetRequest = 11,
  kWaitRequest = 12,
  kAddRequest = 13,
  kCompareAndSetRequest = 14,
  kDeleteRequest = 15,
  kReportRequest = 16,
  kTimelineRequest = 17,
  kOkResponse = 20,
  kValueResponse = 21,
  kIntResponse = 22,
  kErrorResponse = 23,
};

// service -> client, first message.
struct Challenge {
  uint32_t protocol_version = kProtocolVersion;
  std::string nonce;  // kJobSecretBytes random bytes
  bool operator==(const Challenge&) const = default;
};

// client -> service, the answer to Challenge.
struct Proof {
  uint32_t protocol_version = kProtocolVersion;
  std::string proof;  // HmacSha256Hex(secret, nonce + kClientProofSuffix)
  bool operator==(const Proof&) const = default;
};

// service -> client: the proof was right; operations are allowed.
struct Welcome {
  std::string proof;  // HmacSha256Hex(secret, nonce + kServerProofSuffix)
  bool operator==(const Welcome&) const = default;
};

// Requests, client -> service. Each is answered by exactly one response.
struct SetRequest {  // -> OkResponse
  std::string key;
  std::string value;
  bool operator==(const SetRequest&) const = default;
};

struct GetRequest {  // -> ValueResponse once the key exists, or ErrorResponse after timeout_ms
  std::string key;
  uint32_t timeout_ms = 0;
  bool operator==(const GetRequest&) const = default;
};

struct WaitRequest {  // -> OkResponse once every key exists, or ErrorResponse after timeout_ms
  std::vector<std::string> keys;
  uint32_t timeout_ms = 0;
  bool operator==(const WaitRequest&) const = default;
};

struct AddRequest {  // -> IntResponse with the new value
  std::string key;
  int64_t delta = 0;
  bool operator==(const AddRequest&) const = default;
};

struct CompareAndSetRequest {  // -> ValueResponse with the value now stored
  std::string key;
  std::string expected;
  std::string desired;
  bool operator==(const CompareAndSetRequest&) const = default;
};

struct DeleteRequest {  // -> OkResponse, whether or not the key existed
  std::string key;
  bool operator==(const DeleteRequest&) const = default;
};

struct ReportRequest {  // -> OkResponse; the rank's end-of-run report for the launcher
  int32_t rank = 0;
  std::string json;
  bool operator==(const ReportRequest&) const = default;
};

// -> OkResponse; a piece of the rank's timeline file (runtime/timeline/timeline.h), to be written at
// `offset` of the launcher's copy: a rank on another host than hvdrun's sends its file in pieces
// when its runtime ends. Offset 0 starts the copy afresh.
struct TimelineRequest {
  int32_t rank = 0;
  uint64_t offset = 0;
  std::string data;
  bool operator==(const TimelineRequest&) const = default;
};

// Responses, service -> client.
struct OkResponse {
  bool operator==(const OkResponse&) const = default;
};

struct ValueResponse {
  std::string value;
  bool operator==(const ValueResponse&) const = default;
};

struct IntResponse {
  int64_t value = 0;
  bool operator==(const IntResponse&) const = default;
};

// The request failed (or the handshake was refused); `message` is one line that names what failed
// (the key, the limit), without the service's address.
struct ErrorResponse {
  std::string message;
  bool operator==(const ErrorResponse&) const = default;
};

using Message = std::variant<Challenge, Proof, Welcome, SetRequest, GetRequest, WaitRequest, AddRequest,
                             CompareAndSetRequest, DeleteRequest, ReportRequest, TimelineRequest, OkResponse,
                             ValueResponse, IntResponse, ErrorResponse>;

// Whether `message` is one that a client sends once authenticated: SetRequest to TimelineRequest.
bool IsRequest(const Message& message);

// How long a GetRequest or WaitRequest may wait for its keys (its timeout_ms); 0 for any other
// message.
std::chrono::milliseconds WaitTimeout(const Message& message);

// Name of the message's type, for error messages ("GetRequest").
std::string_view MessageName(const Message& message);

// The whole frame: length, type and fields.
std::string EncodeFrame(const Message& message);

// Decodes one message from its type byte and fields.
StatusOr<Message> DecodeMessage(uint8_t type, std::string_view fields);

// Reassembles messages from a byte stream that arrives in arbitrary pieces (common/protocol/framing.h); the
// limit is kMaxFrameBytes unless given, and set_max_frame_bytes() changes it (raised once a
// connection is authenticated).
using FrameDecoder = framing::FrameDecoder<Message, DecodeMessage, kMaxFrameBytes>;

}  // namespace hvdrun::rendezvous

#endif  // HVDRUN_COMMON_PROTOCOL_RENDEZVOUS_PROTOCOL_H_
