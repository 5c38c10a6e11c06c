// libFuzzer target for the framing both protocols share (common/protocol/framing.h), below any protocol:
// FrameBuffer, under any frame limit, fed any bytes in pieces of any sizes, and for long enough
// that it drops what it consumed along the way. Whatever it yields must be the stream's own frames,
// in order: each a length that is within the limit and not 0, then that many bytes; what is
// pending is always the rest of what arrived. An error ends the stream, as it ends a connection.
// Build and run: tests/fuzz/CMakeLists.txt.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "common/protocol/framing.h"

using hvdrun::framing::FrameBuffer;
using hvdrun::framing::kLengthBytes;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  // The first two bytes give the frame limit, the third the sizes of the pieces; the rest, repeated
  // until the stream passes 8 KiB (the buffer drops consumed bytes past 4 KiB), is the stream.
  uint32_t limit = static_cast<uint32_t>(data[0]) << 8 | data[1];
  uint8_t piece_seed = data[2];
  std::string_view input(reinterpret_cast<const char*>(data) + 3, size - 3);
  if (input.empty()) return 0;
  std::string stream;
  while (stream.size() < (8u << 10)) stream.append(input);

  const std::string_view all = stream;

  FrameBuffer frames(limit);
  size_t appended = 0;
  size_t consumed = 0;
  for (size_t piece = 1 + piece_seed % 97; appended < stream.size();
       piece = 1 + (piece * 31 + piece_seed) % 997) {
    std::string_view bytes = all.substr(appended, piece);
    frames.Append(bytes);
    appended += bytes.size();
    while (true) {
      if (frames.pending() != all.substr(consumed, appended - consumed)) std::abort();
      hvdrun::StatusOr<std::optional<std::string_view>> body = frames.Peek();
      if (!body.ok()) return 0;
      if (!body.value()) break;
      std::string_view frame = *body.value();
      if (frame.empty() || frame.size() > limit) std::abort();
      if (hvdrun::framing::Frame(frame) != all.substr(consumed, kLengthBytes + frame.size())) {
        std::abort();
      }
      frames.Consume();
      consumed += kLengthBytes + frame.size();
    }
  }
  return 0;
}
