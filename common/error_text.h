// Pieces of one-line error messages that several modules word alike: durations, and text that
// came from elsewhere (a key, a peer's bytes) shown safely.
#ifndef HVDRUN_COMMON_ERROR_TEXT_H_
#define HVDRUN_COMMON_ERROR_TEXT_H_

#include <chrono>
#include <string>
#include <string_view>

namespace hvdrun {

// "250 ms", "60 s", "1.5 s": under a second in milliseconds, else in seconds, with as many of three
// decimals as are needed.
std::string DurationText(std::chrono::milliseconds duration);

// `text` made safe for a one-line message: bytes outside printable ASCII become '?', and text
// longer than 80 bytes is cut there, followed by "...".
std::string PrintableText(std::string_view text);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_ERROR_TEXT_H_
