#include "common/error_text.h"

#include <cstddef>

namespace hvdrun {

std::string DurationText(std::chrono::milliseconds duration) {
  const auto ms = duration.count();
  if (ms < 1000) return std::to_string(ms) + " ms";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  std::string text = std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 + 1000).substr(1);
  while (text.back() == '0') text.pop_back();
  return text + " s";
}

std::string RankListText(const std::vector<int>& ranks, size_t most) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size() && i < most; ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
  }
  if (ranks.size() > most) text += " and " + std::to_string(ranks.size() - most) + " more";
  return text;
}

std::string PrintableText(std::string_view text) {
  constexpr size_t kMaxShown = 80;
  std::string out;
  for (char c : text.substr(0, kMaxShown)) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  if (text.size() > kMaxShown) out += "...";
  return out;
}

std::string OneLineText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte == 0x7f) {
      out.push_back('?');
    } else if (byte == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      out.push_back('?');  // U+0080 to U+009F
      ++i;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

std::string QuotedOneLine(std::string_view text) {
  // Appended, not chained: GCC 12's -Wrestrict misreads a chain at -O3.
  std::string quoted = OneLineText(text);
  quoted.insert(0, 1, '\'');
  quoted.push_back('\'');
  return quoted;
}

}  // namespace hvdrun
