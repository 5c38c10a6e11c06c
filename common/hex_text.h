// Bytes written as hexadecimal digits and read back: job secrets and their proofs, the NCCL unique
// id that rank 0 publishes in the job's key-value store, the shared-memory listener's random name.
// Every function here is pure and thread-safe.
#ifndef HVDRUN_COMMON_HEX_TEXT_H_
#define HVDRUN_COMMON_HEX_TEXT_H_

#include <optional>
#include <string>
#include <string_view>

namespace hvdrun {

// Lower-case hex of `bytes`, two digits per byte.
std::string HexEncode(std::string_view bytes);

// The bytes that `hex` spells (an even number of hex digits, either case); none when it is not that.
std::optional<std::string> HexDecode(std::string_view hex);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_HEX_TEXT_H_
