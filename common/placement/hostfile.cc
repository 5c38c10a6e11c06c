#include "common/placement/hostfile.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace hvdrun {
namespace {

std::vector<std::string_view> SplitWords(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

// The N of a word written as -H writes a host ("server1:4": a name, one ':' and digits); empty for
// anything else (an IPv6 address has more than one ':').
std::string SlotsOfHostSpec(std::string_view word) {
  const size_t colon = word.find(':');
  if (colon == std::string_view::npos || colon == 0 || word.find(':', colon + 1) != std::string_view::npos) {
    return "";
  }
  std::string_view digits = word.substr(colon + 1);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) return "";
  return std::string(digits);
}

}  // namespace

StatusOr<std::vector<HostSlots>> ParseHostfile(std::string_view contents, std::string_view path) {
  HostListBuilder hosts;
  size_t line_number = 0;
  size_t start = 0;
  while (start < contents.size()) {
    // A line ends at LF, CR LF or a lone CR (a file saved with old Mac line ends is still one host
    // a line, and a '#' comments out the rest of its own line only).
    size_t end = contents.find_first_of("\r\n", start);
    if (end == std::string_view::npos) end = contents.size();
    std::string_view line = contents.substr(start, end - start);
    start = end + (contents.substr(end, 2) == "\r\n" ? 2 : 1);
    ++line_number;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::vector<std::string_view> words = SplitWords(line);
    if (words.empty()) continue;

    auto error = [&](const std::string& problem) {
      return Status::Error(std::string(path) + ":" + std::to_string(line_number) + ": " + problem);
    };
    HostSlots entry;
    std::string_view host = words[0];
    if (size_t at = host.find('@'); at != std::string_view::npos) {
      if (std::string problem = CheckUserName(host.substr(0, at)); !problem.empty()) {
        return error("host '" + std::string(words[0]) + "': " + problem);
      }
      entry.user = std::string(host.substr(0, at));
      host = host.substr(at + 1);
    }
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    } else if (std::string slots = SlotsOfHostSpec(host); !slots.empty()) {
      // Appended, not "'" + ...: GCC 12's -Wrestrict misreads that chain at -O3.
      std::string problem(words[0]);
      problem.insert(0, 1, '\'');
      problem.append("' is -H's form; a hostfile line is 'host slots=N' (write '")
          .append(words[0].substr(0, words[0].rfind(':')))
          .append(" slots=")
          .append(slots)
          .append("')");
      return error(problem);
    }
    if (std::string problem = CheckHostName(host); !problem.empty()) {
      return error("host '" + std::string(words[0]) + "': " + problem);
    }
    entry.host = std::string(host);
    int max_slots = 0;
    bool has_slots = false;
    for (size_t i = 1; i < words.size(); ++i) {
      std::string_view word = words[i];
      size_t equals = word.find('=');
      std::string_view key = word.substr(0, equals);
      std::string_view value = equals == std::string_view::npos ? "" : word.substr(equals + 1);
      if ((key == "slots" || key == "max_slots") && equals != std::string_view::npos) {
        has_slots = has_slots || key == "slots";
        if (std::string problem = ParseSlotCount(key, value, key == "slots" ? &entry.slots : &max_slots);
            !problem.empty()) {
          return error(problem);
        }
      } else {
        return error("unexpected '" + std::string(word) +
                     "' (expected slots=N or max_slots=N after the host)");
      }
    }
    if (max_slots != 0 && max_slots < entry.slots) {
      return error("max_slots=" + std::to_string(max_slots) +
                   " is below slots=" + std::to_string(entry.slots));
    }
    if (max_slots != 0 && !has_slots) entry.slots = 1;
    if (std::string problem = hosts.Add(std::move(entry)); !problem.empty()) return error(problem);
  }
  if (hosts.hosts().empty()) {
    return Status::Error("--hostfile: " + std::string(path) +
                         " names no host (expected lines like 'server1 slots=4')");
  }
  return std::move(hosts).Take();
}

StatusOr<std::vector<HostSlots>> ReadHostfile(const std::string& path) {
  if (path.empty()) return Status::Error("--hostfile: an empty file name");
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return Status::Error("--hostfile: cannot read '" + path + "': " + std::strerror(EISDIR));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error("--hostfile: cannot read '" + path + "': " + std::strerror(errno));
  // Read at most one piece past the limit, so that /dev/zero or a wrong file ends at once.
  std::string contents;
  char piece[1 << 16];
  while (contents.size() <= kMaxHostfileBytes && in.read(piece, sizeof(piece)).gcount() > 0) {
    contents.append(piece, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Status::Error("--hostfile: cannot read '" + path + "': " + std::strerror(errno));
  if (contents.size() > kMaxHostfileBytes) {
    return Status::Error("--hostfile: '" + path + "' holds more than " +
                         std::to_string(kMaxHostfileBytes >> 20) +
                         " MiB (a hostfile lists hosts, one a line)");
  }
  return ParseHostfile(contents, path);
}

}  // namespace hvdrun
