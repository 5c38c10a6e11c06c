// Pieces of one-line error messages that several modules word alike: durations, lists of ranks,
// and text that came from elsewhere (a key, a peer's bytes) shown safely.
#ifndef HVDRUN_COMMON_ERROR_TEXT_H_
#define HVDRUN_COMMON_ERROR_TEXT_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hvdrun {

// "250 ms", "60 s", "1.5 s": under a second in milliseconds, else in seconds, with as many of three
// decimals as are needed.
std::string DurationText(std::chrono::milliseconds duration);

// "rank 3", "ranks 0, 1, 2": `ranks` in their order, after "rank" or "ranks" as their number asks.
// With more than `most` ranks, the first `most` and then " and N more" ("ranks 0, 1 and 6 more").
std::string RankListText(const std::vector<int>& ranks, size_t most = SIZE_MAX);

// `text` made safe for a one-line message: bytes outside printable ASCII become '?', and text
// longer than 80 bytes is cut there, followed by "...".
std::string PrintableText(std::string_view text);

// `text` kept whole but for the bytes that would break a one-line message or play tricks on a
// terminal: control characters (C0, DEL, and C1 written as UTF-8) become '?'. Other bytes, UTF-8
// text included, are kept, so that a name in any language reads as it was written.
std::string OneLineText(std::string_view text);

// OneLineText(text) in single quotes, as messages name a tensor: 'grad.fc'.
std::string QuotedOneLine(std::string_view text);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_ERROR_TEXT_H_
