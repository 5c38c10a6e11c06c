#include "common/host/network_interfaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/process/file_descriptor.h"

namespace hvdrun {

std::vector<InterfaceAddress> ListInterfaceAddresses() {
  std::vector<InterfaceAddress> found;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return found;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET) continue;
    if ((entry->ifa_flags & IFF_UP) == 0) continue;
    char text[INET_ADDRSTRLEN] = {};
    const auto* address = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
    if (::inet_ntop(AF_INET, &address->sin_addr, text, sizeof(text)) == nullptr) continue;
    found.push_back({entry->ifa_name, text});
  }
  ::freeifaddrs(list);
  return found;
}

bool IsValidInterfaceName(const std::string& name) {
  if (name.empty() || name.size() >= IFNAMSIZ) return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return c == '/' || c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n';
  });
}

StatusOr<HostNetwork> ChooseHostNetwork(const std::vector<InterfaceAddress>& interfaces,
                                        const std::vector<std::string>& names,
                                        const std::string& seen_address, const std::string& host) {
  if (names.empty()) {
    auto holder = std::find_if(interfaces.begin(), interfaces.end(), [&](const InterfaceAddress& interface) {
      return interface.address == seen_address;
    });
    return HostNetwork{seen_address, holder != interfaces.end() ? holder->name : ""};
  }
  for (const std::string& name : names) {
    for (const InterfaceAddress& interface : interfaces) {
      if (interface.name == name) return HostNetwork{interface.address, name};
    }
  }
  std::string has;
  for (const InterfaceAddress& interface : interfaces) {
    has += (has.empty() ? "" : ", ") + interface.name + " " + interface.address;
  }
  std::string named;
  for (const std::string& name : names) named += (named.empty() ? "" : " or ") + name;
  return Status::Error("host " + host + ": no network interface named " + named + " with an IPv4 address (" +
                       (has.empty() ? std::string("it has none") : "it has " + has) + ")");
}

std::string JoinInterfaceNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ",") + name;
  return joined;
}

namespace {

std::string FormatIpv4(const in_addr& address) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &address, text, sizeof(text));
  return text;
}

}  // namespace

StatusOr<std::string> ResolveIpv4(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (int error = ::getaddrinfo(host.c_str(), nullptr, &hints, &found); error != 0) {
    return Status::Error("resolve: cannot resolve '" + host + "': " + ::gai_strerror(error));
  }
  in_addr address = reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr;
  ::freeaddrinfo(found);
  return FormatIpv4(address);
}

StatusOr<std::string> LocalAddressToward(const std::string& address) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);  // any port: nothing is sent
  if (::inet_pton(AF_INET, address.c_str(), &to.sin_addr) != 1) {
    return Status::Error("connect: '" + address + "' is not an IPv4 address");
  }
  UniqueFd socket(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_in local{};
  socklen_t length = sizeof(local);
  if (!socket.valid() || ::connect(socket.get(), reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0 ||
      ::getsockname(socket.get(), reinterpret_cast<sockaddr*>(&local), &length) != 0) {
    return Status::Error("connect: no route from this machine to " + address + ": " + std::strerror(errno));
  }
  return FormatIpv4(local.sin_addr);
}

}  // namespace hvdrun
