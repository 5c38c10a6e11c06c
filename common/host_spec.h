// Host specifications: where ranks may run and how many on each host.
//
// The -H/--hosts syntax of horovodrun and mpirun: a comma list of `host[:slots]`, where host is a
// name, an IPv4 address or a bracketed IPv6 address (`[fe80::1]:2`); slots default to 1; a host
// named twice gets the sum of its slots (Open MPI's rule) and keeps its first position.
#ifndef HVDRUN_COMMON_HOST_SPEC_H_
#define HVDRUN_COMMON_HOST_SPEC_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace hvdrun {

struct HostSlots {
  std::string host;  // name or address, without IPv6 brackets
  int slots = 1;     // ranks that may run there
  bool operator==(const HostSlots&) const = default;
};

// Parses a -H value. Errors name the token, its 1-based position and the rule it breaks.
StatusOr<std::vector<HostSlots>> ParseHostList(std::string_view spec);

// Checks a host name or address as written by a user (no brackets); returns an error message
// fragment, or an empty string when the name is acceptable.
std::string CheckHostName(std::string_view host);

// Adds `entry` to `hosts`, summing slots with an earlier entry of the same host.
void MergeHost(std::vector<HostSlots>& hosts, HostSlots entry);

// Sum of the slots of every host.
int TotalSlots(const std::vector<HostSlots>& hosts);

// `host:slots`, with brackets around IPv6 addresses: the inverse of ParseHostList for one entry.
std::string FormatHostSlots(const HostSlots& entry);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_HOST_SPEC_H_
