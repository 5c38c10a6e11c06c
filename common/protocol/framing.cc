#include "common/protocol/framing.h"

namespace hvdrun::framing {
namespace {

// Consumed bytes are kept until there are more than this many, and more than what is still
// pending, so that a long stream of small frames is not shifted down once per frame.
constexpr size_t kCompactAfterBytes = 4096;

}  // namespace

std::string Frame(std::string_view body) {
  ByteWriter frame;
  frame.U32(static_cast<uint32_t>(body.size()));
  std::string out = frame.Take();
  out.append(body);
  return out;
}

Status UnknownMessageType(uint8_t type) {
  return Status::Error("unknown message type " + std::to_string(type));
}

Status MalformedMessage(std::string_view name) {
  return Status::Error("malformed " + std::string(name) + " message");
}

Status ExtraBytes(std::string_view name, size_t count) {
  return Status::Error(std::string(name) + " message has " + std::to_string(count) + " extra bytes");
}

StatusOr<std::optional<std::string_view>> FrameBuffer::Peek() const {
  std::string_view rest = pending();
  ByteReader header(rest);
  uint32_t length = 0;
  if (!header.U32(&length)) return std::optional<std::string_view>();
  if (length == 0) return Status::Error("empty frame (length 0)");
  if (length > max_frame_bytes_) {
    return Status::Error("frame of " + std::to_string(length) + " bytes exceeds the limit of " +
                         std::to_string(max_frame_bytes_));
  }
  if (rest.size() - kLengthBytes < length) return std::optional<std::string_view>();
  return std::optional<std::string_view>(rest.substr(kLengthBytes, length));
}

void FrameBuffer::Consume() {
  ByteReader header(pending());
  uint32_t length = 0;
  if (!header.U32(&length) || header.remaining() < length) return;  // no complete frame
  consumed_ += kLengthBytes + length;
  if (consumed_ > kCompactAfterBytes && consumed_ * 2 > buffer_.size()) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
}

}  // namespace hvdrun::framing
