#include "tests/e2e/console_output.h"

#include <charconv>
#include <optional>

namespace hvdrun::e2e {
namespace {

struct Tag {
  int rank;
  std::string stream;
  size_t text_start;
};

// Parses `[R]<stream>:` at the start of `line`.
std::optional<Tag> ParseTag(const std::string& line) {
  if (line.empty() || line[0] != '[') return std::nullopt;
  size_t close = line.find(']');
  if (close == std::string::npos || close + 1 >= line.size() || line[close + 1] != '<') return std::nullopt;
  int rank = -1;
  auto [end, error] = std::from_chars(line.data() + 1, line.data() + close, rank);
  if (error != std::errc() || end != line.data() + close) return std::nullopt;
  size_t stream_end = line.find(">:", close);
  if (stream_end == std::string::npos) return std::nullopt;
  return Tag{rank, line.substr(close + 2, stream_end - close - 2), stream_end + 2};
}

}  // namespace

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t newline = text.find('\n', start);
    if (newline == std::string::npos) newline = text.size();
    lines.push_back(text.substr(start, newline - start));
    start = newline + 1;
  }
  return lines;
}

std::map<int, std::vector<std::string>> TaggedLines(const std::string& console, const std::string& stream) {
  std::map<int, std::vector<std::string>> by_rank;
  for (const std::string& line : SplitLines(console)) {
    std::optional<Tag> tag = ParseTag(line);
    if (tag && tag->stream == stream) by_rank[tag->rank].push_back(line.substr(tag->text_start));
  }
  return by_rank;
}

std::vector<std::string> UntaggedLines(const std::string& console) {
  std::vector<std::string> lines;
  for (const std::string& line : SplitLines(console)) {
    if (!ParseTag(line)) lines.push_back(line);
  }
  return lines;
}

std::map<std::string, std::string> ParseAssignments(const std::vector<std::string>& lines) {
  std::map<std::string, std::string> values;
  for (const std::string& line : lines) {
    size_t equals = line.find('=');
    if (equals != std::string::npos) values[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return values;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace hvdrun::e2e
