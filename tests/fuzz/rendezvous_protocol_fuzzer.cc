// libFuzzer target for the rendezvous protocol's decoder (common/protocol/rendezvous_protocol.h), before and
// after authentication (frame_decoder_fuzzing.h says what is checked). Build and run:
// tests/fuzz/CMakeLists.txt.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "common/protocol/rendezvous_protocol.h"
#include "tests/fuzz/frame_decoder_fuzzing.h"

namespace rendezvous = hvdrun::rendezvous;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the frame limit (before or after authentication) and where the rest is
  // split in two.
  uint8_t control = data[0];
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  rendezvous::FrameDecoder decoder((control & 1) != 0 ? rendezvous::kMaxHandshakeFrameBytes
                                                      : rendezvous::kMaxFrameBytes);
  // No rendezvous message is extensible.
  hvdrun::fuzzing::FuzzFrameDecoder(std::move(decoder), input, control >> 1, &rendezvous::EncodeFrame);
  return 0;
}
