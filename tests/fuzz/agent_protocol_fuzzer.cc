// libFuzzer target for the agent protocol's decoder (common/protocol/agent_protocol.h), which reads what
// comes back over an SSH channel from another machine (frame_decoder_fuzzing.h says what is
// checked). Build and run: tests/fuzz/CMakeLists.txt.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "common/protocol/agent_protocol.h"
#include "tests/fuzz/frame_decoder_fuzzing.h"

namespace {

namespace protocol = hvdrun::protocol;

bool Extensible(const protocol::Message& message) {
  return std::holds_alternative<protocol::Hello>(message) ||
         std::holds_alternative<protocol::AgentHello>(message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks where the rest is split in two.
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  hvdrun::fuzzing::FuzzFrameDecoder(protocol::FrameDecoder(), input, data[0], &protocol::EncodeFrame,
                                    &Extensible);
  return 0;
}
