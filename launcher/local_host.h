// Whether a host name from -H or a hostfile means this machine: "localhost", any 127.0.0.0/8
// address, ::1, this machine's host name (short or fully qualified), or one of its interface
// addresses. Names are not resolved through DNS.
#ifndef HVDRUN_LAUNCHER_LOCAL_HOST_H_
#define HVDRUN_LAUNCHER_LOCAL_HOST_H_

#include <string>

namespace hvdrun {

bool IsLocalHost(const std::string& host);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_LOCAL_HOST_H_
