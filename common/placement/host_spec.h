// Host specifications: where ranks may run and how many on each host.
//
// The -H/--hosts syntax of horovodrun and mpirun: a comma list of `[user@]host[:slots]`, where host
// is a name, an IPv4 address or a bracketed IPv6 address (`[fe80::1]:2`); slots default to 1; a
// host named twice gets the sum of its slots (Open MPI's rule) and keeps its first position. The
// optional user is the SSH login for that host (overriding --ssh-user); a host named twice must
// name the same user each time (or none after the first).
#ifndef HVDRUN_COMMON_PLACEMENT_HOST_SPEC_H_
#define HVDRUN_COMMON_PLACEMENT_HOST_SPEC_H_

#include <string>
#include <string_view>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun {

struct HostSlots {
  std::string host;    // name or address, without IPv6 brackets
  int slots = 1;       // ranks that may run there
  std::string user{};  // SSH login for this host; empty: --ssh-user, else SSH's default
  bool operator==(const HostSlots&) const = default;
};

// Parses a -H value. Errors name the token, its 1-based position and the rule it breaks.
StatusOr<std::vector<HostSlots>> ParseHostList(std::string_view spec);

// Checks a host name or address as written by a user (no brackets); returns an error message
// fragment, or an empty string when the name is acceptable.
std::string CheckHostName(std::string_view host);

// Checks the user part of `user@host`; same contract as CheckHostName.
std::string CheckUserName(std::string_view user);

// Adds `entry` to `hosts`, summing slots with an earlier entry of the same host (which takes
// entry's user when it had none). Returns an error message fragment, or an empty string, when the
// two entries name different users.
std::string MergeHost(std::vector<HostSlots>& hosts, HostSlots entry);

// Sum of the slots of every host.
int TotalSlots(const std::vector<HostSlots>& hosts);

// `[user@]host:slots`, with brackets around IPv6 addresses: the inverse of ParseHostList for one
// entry.
std::string FormatHostSlots(const HostSlots& entry);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PLACEMENT_HOST_SPEC_H_
