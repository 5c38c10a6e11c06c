// What the protocol fuzzers in this folder check of a protocol's FrameDecoder (common/protocol/framing.h):
// any bytes, fed in two pieces as they might arrive from a socket, decode to messages or to an
// error, never crash, read out of bounds or allocate more than the input could hold; and every
// message decoded re-encodes to a frame that decodes to the same message — to the very bytes it
// came from, unless the message is extensible (its trailing bytes are ignored, and an earlier
// version's may lack fields).
#ifndef HVDRUN_TESTS_FUZZ_FRAME_DECODER_FUZZING_H_
#define HVDRUN_TESTS_FUZZ_FRAME_DECODER_FUZZING_H_

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "hvdrun/status.h"

namespace hvdrun::fuzzing {

// `decoder`, `encode_frame` and `extensible` are the protocol's FrameDecoder, EncodeFrame and which of
// its messages are extensible (framing::MessageKind::extensible; null: none is). `split` picks where
// the input is cut in two.
template <typename FrameDecoder, typename Message>
void FuzzFrameDecoder(FrameDecoder decoder, std::string_view input, size_t split,
                      std::string (*encode_frame)(const Message& message),
                      bool (*extensible)(const Message& message) = nullptr) {
  split %= input.size() + 1;
  for (std::string_view piece : {input.substr(0, split), input.substr(split)}) {
    decoder.Append(piece);
    while (true) {
      std::string pending(decoder.pending());
      StatusOr<std::optional<Message>> next = decoder.Next();
      if (!next.ok()) return;  // the decoder must not be used after an error
      if (!next.value()) break;
      const Message& message = *next.value();
      std::string frame = pending.substr(0, pending.size() - decoder.pending().size());
      std::string encoded = encode_frame(message);
      if ((extensible == nullptr || !extensible(message)) && encoded != frame) std::abort();
      FrameDecoder again;
      again.Append(encoded);
      StatusOr<std::optional<Message>> redecoded = again.Next();
      if (!redecoded.ok() || !redecoded.value() || *redecoded.value() != message) std::abort();
    }
  }
}

}  // namespace hvdrun::fuzzing

#endif  // HVDRUN_TESTS_FUZZ_FRAME_DECODER_FUZZING_H_
