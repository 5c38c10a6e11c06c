// Host specifications: where ranks may run and how many on each host.
//
// The -H/--hosts syntax of horovodrun and mpirun: a comma list of `[user@]host[:slots]`, where host
// is a name, an IPv4 address or a bracketed IPv6 address (`[fe80::1]:2`); slots default to 1; a
// host named twice gets the sum of its slots (Open MPI's rule) and keeps its first position. The
// optional user is the SSH login for that host (overriding --ssh-user); a host named twice must
// name the same user each time (or none after the first). Host names follow RFC 1123, as libssh and
// DNS take them; every slot count is a whole number from 1 to kMaxSlots, and so is their sum.
#ifndef HVDRUN_COMMON_PLACEMENT_HOST_SPEC_H_
#define HVDRUN_COMMON_PLACEMENT_HOST_SPEC_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun {

struct HostSlots {
  std::string host;    // name or address, without IPv6 brackets
  int slots = 1;       // ranks that may run there
  std::string user{};  // SSH login for this host; empty: --ssh-user, else SSH's default
  bool operator==(const HostSlots&) const = default;
};

// The most slots a host list may hold, on one host or on all together: -np's own limit (one job
// runs at most this many ranks), far above any real allocation, and small enough that no sum of
// slots overflows an int.
inline constexpr int kMaxSlots = 1 << 20;

// Parses a -H value. Errors name the token, its 1-based position and the rule it breaks.
StatusOr<std::vector<HostSlots>> ParseHostList(std::string_view spec);

// Checks a host name or address as written by a user (no brackets); returns an error message
// fragment, or an empty string when the name is acceptable.
std::string CheckHostName(std::string_view host);

// Checks the user part of `user@host`; same contract as CheckHostName.
std::string CheckUserName(std::string_view user);

// Reads a slot count (`4` of `host:4`, `slots=4`, `max_slots=4`) into `*slots`. Returns an error
// message fragment naming `key`, the range and the text ("slots must be a whole number from 1 to
// 1048576, got '2000000'"), or an empty string. -H and hostfiles share it, so they agree on the
// limit and the wording.
std::string ParseSlotCount(std::string_view key, std::string_view text, int* slots);

// Builds a host list entry by entry, as -H and hostfiles name hosts: a host named again gets the
// sum of its slots and keeps its first position (taking the new entry's user when it had none).
// Linear time in the entries. Not thread-safe.
class HostListBuilder {
 public:
  // Adds `entry`. Returns an error message fragment, or an empty string: the entry names another
  // user than the host's earlier entry, or the slots would add up to more than kMaxSlots (the
  // list is then unchanged).
  std::string Add(HostSlots entry);

  const std::vector<HostSlots>& hosts() const { return hosts_; }
  std::vector<HostSlots> Take() && { return std::move(hosts_); }

 private:
  std::vector<HostSlots> hosts_;
  std::unordered_map<std::string, size_t> index_;  // host -> its position in hosts_
  int64_t total_slots_ = 0;
};

// Sum of the slots of every host, at most kMaxSlots (what the parsers above build never holds
// more; a list built otherwise counts as full).
int TotalSlots(const std::vector<HostSlots>& hosts);

// `[user@]host:slots`, with brackets around IPv6 addresses: the inverse of ParseHostList for one
// entry.
std::string FormatHostSlots(const HostSlots& entry);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PLACEMENT_HOST_SPEC_H_
