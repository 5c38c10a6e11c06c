#include "common/placement/host_spec.h"

#include <arpa/inet.h>

#include <algorithm>
#include <string>
#include <utility>

#include "common/whole_number.h"

namespace hvdrun {
namespace {

// RFC 1123's limits on a host name and on each of its dot-separated labels.
constexpr size_t kMaxHostNameLength = 253;
constexpr size_t kMaxLabelLength = 63;

bool IsLetterOrDigit(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// The characters of user names and of IPv6 zones (interface names): wider than a host label's.
bool IsNameChar(char c) { return IsLetterOrDigit(c) || c == '-' || c == '.' || c == '_'; }

std::string CheckIpv6Address(std::string_view host) {
  // A zone (fe80::1%eth0) is an interface name.
  const size_t percent = host.find('%');
  const std::string address(host.substr(0, percent));
  const std::string_view zone = percent == std::string_view::npos ? "" : host.substr(percent + 1);
  in6_addr parsed{};
  if (::inet_pton(AF_INET6, address.c_str(), &parsed) != 1 ||
      (percent != std::string_view::npos && zone.empty()) ||
      !std::all_of(zone.begin(), zone.end(), IsNameChar)) {
    return "not a valid IPv6 address";
  }
  return "";
}

Status TokenError(size_t position, std::string_view token, std::string_view problem) {
  return Status::Error("-H: host " + std::to_string(position) + " '" + std::string(token) +
                       "': " + std::string(problem));
}

}  // namespace

std::string CheckHostName(std::string_view host) {
  if (host.empty()) return "empty host name";
  if (host.find(':') != std::string_view::npos) return CheckIpv6Address(host);
  if (!std::all_of(host.begin(), host.end(),
                   [](char c) { return IsLetterOrDigit(c) || c == '-' || c == '.'; })) {
    return "host names may hold only letters, digits, '-' and '.'";
  }
  if (host.front() == '-') return "a host name cannot start with '-'";
  if (host.size() > kMaxHostNameLength) {
    return "a host name has at most " + std::to_string(kMaxHostNameLength) + " characters";
  }
  size_t start = 0;
  while (true) {
    const size_t dot = std::min(host.find('.', start), host.size());
    const std::string_view label = host.substr(start, dot - start);
    if (label.empty()) return "a '.' at the start or end, or two in a row";
    if (label.front() == '-' || label.back() == '-') {
      return "a part between dots cannot start or end with '-'";
    }
    if (label.size() > kMaxLabelLength) {
      return "a part between dots has at most " + std::to_string(kMaxLabelLength) + " characters";
    }
    if (dot == host.size()) return "";
    start = dot + 1;
  }
}

std::string CheckUserName(std::string_view user) {
  if (user.empty()) return "empty user name before '@'";
  if (!std::all_of(user.begin(), user.end(), IsNameChar)) {
    return "user names may hold only letters, digits, '-', '.' and '_'";
  }
  if (user.front() == '-') return "a user name cannot start with '-'";
  return "";
}

std::string ParseSlotCount(std::string_view key, std::string_view text, int* slots) {
  const ParsedWholeNumber parsed = ParseWholeNumber(text, 1, kMaxSlots);
  if (!parsed.ok()) {
    return std::string(key) + " must be a whole number from 1 to " + std::to_string(kMaxSlots) + ", got '" +
           std::string(text) + "'";
  }
  *slots = static_cast<int>(parsed.value);
  return "";
}

StatusOr<std::vector<HostSlots>> ParseHostList(std::string_view spec) {
  HostListBuilder hosts;
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
      if (std::string problem = ParseSlotCount("slots", slots_text, &entry.slots); !problem.empty()) {
        return TokenError(position, token, problem);
      }
    }
    if (std::string problem = hosts.Add(std::move(entry)); !problem.empty()) {
      return TokenError(position, token, problem);
    }
    if (comma == spec.size()) break;
  }
  return std::move(hosts).Take();
}

std::string HostListBuilder::Add(HostSlots entry) {
  if (total_slots_ + entry.slots > kMaxSlots) {
    return "the slots add up to " + std::to_string(total_slots_ + entry.slots) + ", more than " +
           std::to_string(kMaxSlots) + " (the most ranks one job runs)";
  }
  auto [found, added] = index_.try_emplace(entry.host, hosts_.size());
  if (added) {
    total_slots_ += entry.slots;
    hosts_.push_back(std::move(entry));
    return "";
  }
  HostSlots& existing = hosts_[found->second];
  if (!entry.user.empty() && !existing.user.empty() && entry.user != existing.user) {
    return "host '" + entry.host + "' is already named with user '" + existing.user +
           "' (one login per host)";
  }
  if (existing.user.empty()) existing.user = std::move(entry.user);
  existing.slots += entry.slots;
  total_slots_ += entry.slots;
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
