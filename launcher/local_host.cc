#include "launcher/local_host.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <pwd.h>
#include <unistd.h>

#include <cstring>

namespace hvdrun {
namespace {

bool IsInterfaceAddress(const std::string& host) {
  in_addr v4{};
  in6_addr v6{};
  bool is_v4 = ::inet_pton(AF_INET, host.c_str(), &v4) == 1;
  bool is_v6 = !is_v4 && ::inet_pton(AF_INET6, host.c_str(), &v6) == 1;
  if (!is_v4 && !is_v6) return false;
  if (is_v4 && (ntohl(v4.s_addr) >> 24) == 127) return true;
  if (is_v6 && IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return false;
  bool found = false;
  for (ifaddrs* entry = list; entry != nullptr && !found; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr) continue;
    if (is_v4 && entry->ifa_addr->sa_family == AF_INET) {
      found = reinterpret_cast<sockaddr_in*>(entry->ifa_addr)->sin_addr.s_addr == v4.s_addr;
    } else if (is_v6 && entry->ifa_addr->sa_family == AF_INET6) {
      found = std::memcmp(&reinterpret_cast<sockaddr_in6*>(entry->ifa_addr)->sin6_addr, &v6, sizeof(v6)) == 0;
    }
  }
  ::freeifaddrs(list);
  return found;
}

}  // namespace

bool IsLocalHost(const std::string& host) {
  if (host == "localhost" || host == "localhost.localdomain" || host == "ip6-localhost") return true;
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) == 0) {
    std::string own(name);
    if (host == own) return true;
    std::string short_own = own.substr(0, own.find('.'));
    if (host == short_own || host.substr(0, host.find('.')) == own) return true;
  }
  return IsInterfaceAddress(host);
}

bool RunsHere(const std::string& host, const std::string& user) {
  if (!IsLocalHost(host)) return false;
  if (user.empty()) return true;
  const passwd* self = ::getpwuid(::geteuid());
  return self != nullptr && user == self->pw_name;
}

}  // namespace hvdrun
