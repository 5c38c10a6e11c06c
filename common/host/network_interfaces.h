// The IPv4 addresses of this machine's network interfaces, and the one rule that places a host on
// the job's network: which address the job's traffic to and from that host uses, and on which
// interface (`--network-interface`, or the address the job reaches the host by).
#ifndef HVDRUN_COMMON_HOST_NETWORK_INTERFACES_H_
#define HVDRUN_COMMON_HOST_NETWORK_INTERFACES_H_

#include <string>
#include <vector>

#include "hvdrun/status.h"

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

// A host's place on the job's network: its address there (MASTER_ADDR for rank 0's host,
// HVDRUN_HOST_ADDR, where Gloo listens) and the interface that holds it (GLOO_SOCKET_IFNAME and
// NCCL_SOCKET_IFNAME for a job on several hosts).
struct HostNetwork {
  std::string address;
  std::string interface;  // empty when no interface of the host is known to hold `address`
  bool operator==(const HostNetwork&) const = default;
};

// The rule, whoever applies it: hvdrun for each host from the interfaces its agent reported, or,
// under mpirun, where hvdrun cannot see other hosts' interfaces, each rank's agent for its own
// host. `interfaces` are the host's.
//  - With --network-interface (`names` not empty): the host's address on the first of `names` (in
//    their order) it has. The error names the host, the interfaces asked for and the ones it has:
//    "host server2: no network interface named ib0 with an IPv4 address (it has lo 127.0.0.1, eth0
//    10.0.0.2)".
//  - Without: `seen_address`, the address by which the job reaches the host (the remote end of its
//    SSH connection, say), on the interface that holds it, if any does.
StatusOr<HostNetwork> ChooseHostNetwork(const std::vector<InterfaceAddress>& interfaces,
                                        const std::vector<std::string>& names,
                                        const std::string& seen_address, const std::string& host);

// The IPv4 address `host` resolves to (a name, or an address already), as ssh would resolve it.
// The error is "resolve: cannot resolve '<host>': <reason>".
StatusOr<std::string> ResolveIpv4(const std::string& host);

// The address of this machine that traffic to the IPv4 address `address` leaves from: the local
// end of the route to it, which connecting a UDP socket chooses without sending anything. The
// error is "connect: no route from this machine to <address>: <reason>".
StatusOr<std::string> LocalAddressToward(const std::string& address);

// "eth0,ib0": `names` as NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME and Open MPI's *_if_include take them.
std::string JoinInterfaceNames(const std::vector<std::string>& names);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_HOST_NETWORK_INTERFACES_H_
