// Whether a host name from -H or a hostfile means this machine: "localhost", any 127.0.0.0/8
// address, ::1, this machine's host name (short or fully qualified), or one of its interface
// addresses. Names are not resolved through DNS.
#ifndef HVDRUN_LAUNCHER_LOCAL_HOST_H_
#define HVDRUN_LAUNCHER_LOCAL_HOST_H_

#include <string>

namespace hvdrun {

bool IsLocalHost(const std::string& host);

// Whether a host's agent runs here as a child of hvdrun: the host is this machine and `user` (from
// `user@host`) is empty or the user hvdrun runs as. Any other login goes over SSH, even to this
// machine.
bool RunsHere(const std::string& host, const std::string& user);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_LOCAL_HOST_H_
