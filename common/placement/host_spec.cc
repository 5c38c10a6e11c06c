#include "common/placement/host_spec.h"

#include <algorithm>
#include <cstdint>

#include "common/whole_number.h"

namespace hvdrun {
namespace {

// Largest slot count accepted from a user: far above any real host, small enough that sums of
// slots cannot overflow an int.
constexpr int kMaxSlots = 1 << 20;

bool IsHostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_';
}

bool IsIpv6Char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.';
}

// Parses a positive slot count; returns 0 when `text` is not one.
int ParseSlots(std::string_view text) {
  const ParsedWholeNumber slots = ParseWholeNumber(text, 1, kMaxSlots);
  return slots.ok() ? static_cast<int>(slots.value) : 0;
}

Status TokenError(size_t position, std::string_view token, std::string_view problem) {
  return Status::Error("-H: host " + std::to_string(position) + " '" + std::string(token) +
                       "': " + std::string(problem));
}

}  // namespace

std::string CheckHostName(std::string_view host) {
  if (host.empty()) return "empty host name";
  if (host.find(':') != std::string_view::npos) {
    // An IPv6 address, perhaps with a zone (fe80::1%eth0), which is an interface name.
    std::string_view address = host.substr(0, host.find('%'));
    std::string_view zone = address.size() < host.size() ? host.substr(address.size() + 1) : "";
    if (!std::all_of(address.begin(), address.end(), IsIpv6Char) ||
        !std::all_of(zone.begin(), zone.end(), IsHostChar)) {
      return "not a valid IPv6 address";
    }
    return "";
  }
  if (!std::all_of(host.begin(), host.end(), IsHostChar)) {
    return "host names may hold only letters, digits, '-', '.' and '_'";
  }
  if (host.front() == '-') return "a host name cannot start with '-'";
  return "";
}

std::string CheckUserName(std::string_view user) {
  if (user.empty()) return "empty user name before '@'";
  if (!std::all_of(user.begin(), user.end(), IsHostChar)) {
    return "user names may hold only letters, digits, '-', '.' and '_'";
  }
  if (user.front() == '-') return "a user name cannot start with '-'";
  return "";
}

StatusOr<std::vector<HostSlots>> ParseHostList(std::string_view spec) {
  std::vector<HostSlots> hosts;
  if (spec.empty()) return Status::Error("-H: empty host list (expected host[:slots],...)");
  size_t position = 0;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    if (comma == std::string_view::npos) comma = spec.size();
    std::string_view token = spec.substr(start, comma - start);
    ++position;
    start = comma + 1;
    if (token.empty()) return TokenError(position, token, "empty entry (two commas, or a trailing comma)");

    HostSlots entry;
    std::string_view host;
    std::string_view slots_text;
    bool has_slots = false;
    std::string_view address = token;
    if (size_t at = token.find('@'); at != std::string_view::npos) {
      if (std::string problem = CheckUserName(token.substr(0, at)); !problem.empty()) {
        return TokenError(position, token, problem);
      }
      entry.user = std::string(token.substr(0, at));
      address = token.substr(at + 1);
    }
    if (!address.empty() && address.front() == '[') {
      size_t close = address.find(']');
      if (close == std::string_view::npos) {
        return TokenError(position, token, "missing ']' after IPv6 address");
      }
      host = address.substr(1, close - 1);
      std::string_view rest = address.substr(close + 1);
      if (!rest.empty()) {
        if (rest.front() != ':') return TokenError(position, token, "expected ':slots' after ']'");
        slots_text = rest.substr(1);
        has_slots = true;
      }
    } else {
      size_t colon = address.find(':');
      if (colon != std::string_view::npos && address.find(':', colon + 1) != std::string_view::npos) {
        return TokenError(position, token, "IPv6 addresses need brackets, as in [::1]:2");
      }
      host = address.substr(0, colon);
      if (colon != std::string_view::npos) {
        slots_text = address.substr(colon + 1);
        has_slots = true;
      }
    }
    if (std::string problem = CheckHostName(host); !problem.empty()) {
      return TokenError(position, token, problem);
    }
    entry.host = std::string(host);
    if (has_slots) {
      entry.slots = ParseSlots(slots_text);
      if (entry.slots == 0) {
        return TokenError(position, token,
                          "slots must be a whole number from 1 to " + std::to_string(kMaxSlots));
      }
    }
    if (std::string problem = MergeHost(hosts, std::move(entry)); !problem.empty()) {
      return TokenError(position, token, problem);
    }
    if (comma == spec.size()) break;
  }
  return hosts;
}

std::string MergeHost(std::vector<HostSlots>& hosts, HostSlots entry) {
  for (HostSlots& existing : hosts) {
    if (existing.host == entry.host) {
      if (!entry.user.empty() && !existing.user.empty() && entry.user != existing.user) {
        return "host '" + entry.host + "' is already named with user '" + existing.user +
               "' (one login per host)";
      }
      if (existing.user.empty()) existing.user = std::move(entry.user);
      existing.slots = std::min(existing.slots + entry.slots, kMaxSlots);
      return "";
    }
  }
  hosts.push_back(std::move(entry));
  return "";
}

int TotalSlots(const std::vector<HostSlots>& hosts) {
  int64_t total = 0;
  for (const HostSlots& entry : hosts) total += entry.slots;
  return static_cast<int>(std::min<int64_t>(total, kMaxSlots));
}

std::string FormatHostSlots(const HostSlots& entry) {
  bool ipv6 = entry.host.find(':') != std::string::npos;
  std::string host = ipv6 ? "[" + entry.host + "]" : entry.host;
  std::string user = entry.user.empty() ? "" : entry.user + "@";
  return user + host + ":" + std::to_string(entry.slots);
}

}  // namespace hvdrun
