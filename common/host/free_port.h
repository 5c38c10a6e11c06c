// A TCP port that is free on this machine, for a program of the job to listen on (MASTER_PORT).
#ifndef HVDRUN_COMMON_HOST_FREE_PORT_H_
#define HVDRUN_COMMON_HOST_FREE_PORT_H_

#include <cstdint>

namespace hvdrun {

// A port the OS handed out for a wildcard IPv4 bind and that was free at that moment; another
// program may take it before the job does (the same race torchrun accepts). 0 when no socket can
// be bound. Thread-safe.
uint16_t FindFreePort();

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_HOST_FREE_PORT_H_
