// Hostfiles, in the format mpirun, horovodrun and DeepSpeed share:
//
//   # comment
//   server1 slots=4
//   server2 slots=4 max_slots=8   # max_slots is accepted for Open MPI compatibility
//   server3                       # one slot
//
// Hosts named twice get the sum of their slots. max_slots must be at least slots; hvdrun never
// places more than `slots` ranks on a host, so max_slots has no further effect.
#ifndef HVDRUN_COMMON_PLACEMENT_HOSTFILE_H_
#define HVDRUN_COMMON_PLACEMENT_HOSTFILE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/placement/host_spec.h"
#include "hvdrun/status.h"

namespace hvdrun {

// Parses hostfile text; `path` is used only in error messages, which read `path:line: problem`.
StatusOr<std::vector<HostSlots>> ParseHostfile(std::string_view contents, std::string_view path);

// The largest hostfile read: room for every host of the largest job (kMaxSlots) a line each.
inline constexpr size_t kMaxHostfileBytes = size_t{64} << 20;

// Reads and parses the file at `path`; a file larger than kMaxHostfileBytes is an error, read no
// further (so /dev/zero ends at once).
StatusOr<std::vector<HostSlots>> ReadHostfile(const std::string& path);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PLACEMENT_HOSTFILE_H_
