// The IPv4 addresses of this machine's network interfaces, and the choice `--network-interface`
// makes among a host's interfaces: which address the job's traffic to and from that host uses.
#ifndef HVDRUN_COMMON_NETWORK_INTERFACES_H_
#define HVDRUN_COMMON_NETWORK_INTERFACES_H_

#include <string>
#include <vector>

#include "common/status.h"

namespace hvdrun {

// One IPv4 address of one interface: {"eth0", "10.0.0.2"}.
struct InterfaceAddress {
  std::string name;
  std::string address;
  bool operator==(const InterfaceAddress&) const = default;
};

// Every IPv4 address of every interface of this machine that is up, in the kernel's order.
std::vector<InterfaceAddress> ListInterfaceAddresses();

// Whether `name` can be an interface name: 1 to 15 characters (IFNAMSIZ - 1), none of them '/',
// ',', ':' or white space.
bool IsValidInterfaceName(const std::string& name);

// The address of `host` on the first of `names` (in their order) that is among `interfaces`,
// which are that host's. The error names the host, the interfaces asked for and the ones it has:
// "host server2: no network interface named ib0 (it has lo 127.0.0.1, eth0 10.0.0.2)".
StatusOr<std::string> ChooseInterfaceAddress(const std::vector<InterfaceAddress>& interfaces,
                                             const std::vector<std::string>& names, const std::string& host);

// "eth0,ib0": `names` as NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME and Open MPI's *_if_include take them.
std::string JoinInterfaceNames(const std::vector<std::string>& names);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_NETWORK_INTERFACES_H_
