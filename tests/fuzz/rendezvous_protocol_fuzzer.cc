// libFuzzer target for the rendezvous protocol's decoder (common/rendezvous_protocol.h): any bytes,
// fed in two pieces, must decode to messages or to an error, never crash, read out of bounds or
// allocate more than the input could hold; a decoded message must re-encode to the bytes it came from.
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DHVDRUN_FUZZERS=ON
//   ninja -C build-fuzz rendezvous_protocol_fuzzer
//   build-fuzz/bin/rendezvous_protocol_fuzzer -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/rendezvous_protocol.h"

namespace {

using hvdrun::rendezvous::EncodeFrame;
using hvdrun::rendezvous::FrameDecoder;
using hvdrun::rendezvous::Message;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the frame limit (before or after authentication) and where the rest is
  // split into two pieces, as bytes arrive from a socket.
  uint8_t control = data[0];
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  FrameDecoder decoder((control & 1) != 0 ? hvdrun::rendezvous::kMaxHandshakeFrameBytes
                                          : hvdrun::rendezvous::kMaxFrameBytes);
  size_t split = input.empty() ? 0 : (control >> 1) % (input.size() + 1);
  std::string decoded_bytes;
  for (std::string_view piece : {input.substr(0, split), input.substr(split)}) {
    decoder.Append(piece);
    while (true) {
      hvdrun::StatusOr<std::optional<Message>> next = decoder.Next();
      if (!next.ok()) return 0;  // the decoder must not be used after an error
      if (!next.value()) break;
      decoded_bytes += EncodeFrame(*next.value());
    }
  }
  // Every message was decoded from a prefix of the input, and encodes back to it exactly.
  if (input.substr(0, decoded_bytes.size()) != decoded_bytes) std::abort();
  return 0;
}
