#include "common/network_interfaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>

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

StatusOr<std::string> ChooseInterfaceAddress(const std::vector<InterfaceAddress>& interfaces,
                                             const std::vector<std::string>& names, const std::string& host) {
  for (const std::string& name : names) {
    for (const InterfaceAddress& interface : interfaces) {
      if (interface.name == name) return interface.address;
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

}  // namespace hvdrun
