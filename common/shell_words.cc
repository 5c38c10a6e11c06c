#include "common/shell_words.h"

namespace hvdrun {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

bool IsSafe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("_-+=/.,:@%").find(c) != std::string_view::npos;
}

}  // namespace

StatusOr<std::vector<std::string>> SplitShellWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;  // a word has begun, possibly an empty quoted one
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (IsBlank(c)) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      ++i;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      size_t close = text.find('\'', i + 1);
      if (close == std::string_view::npos) return Status::Error("unterminated ' quote");
      word.append(text.substr(i + 1, close - i - 1));
      i = close + 1;
    } else if (c == '"') {
      ++i;
      while (true) {
        if (i == text.size()) return Status::Error("unterminated \" quote");
        char d = text[i];
        if (d == '"') break;
        if (d == '\\' && i + 1 < text.size() &&
            std::string_view("$`\"\\\n").find(text[i + 1]) != std::string_view::npos) {
          if (text[i + 1] != '\n') word.push_back(text[i + 1]);
          i += 2;
          continue;
        }
        word.push_back(d);
        ++i;
      }
      ++i;
    } else if (c == '\\') {
      if (i + 1 == text.size()) return Status::Error("ends in a lone \\");
      if (text[i + 1] != '\n') word.push_back(text[i + 1]);
      i += 2;
    } else {
      word.push_back(c);
      ++i;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string ShellQuote(std::string_view word) {
  bool safe = !word.empty();
  for (char c : word) safe = safe && IsSafe(c);
  if (safe) return std::string(word);
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted.push_back(c);
    }
  }
  quoted += "'";
  return quoted;
}

std::string ShellJoin(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) {
    if (!line.empty()) line.push_back(' ');
    line += ShellQuote(word);
  }
  return line;
}

}  // namespace hvdrun
