// For tests that play one side of the rendezvous protocol themselves, over real loopback sockets:
// the service's tests (launcher/rendezvous/rendezvous_server_test.cc) play a raw client, the client's tests
// (common/protocol/rendezvous_client_test.cc) a scripted service. Test code only: failures are reported
// through GoogleTest.
#ifndef HVDRUN_COMMON_PROTOCOL_RENDEZVOUS_TEST_PEER_H_
#define HVDRUN_COMMON_PROTOCOL_RENDEZVOUS_TEST_PEER_H_

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/process/file_descriptor.h"
#include "common/protocol/rendezvous_protocol.h"

namespace hvdrun::testing {

// A TCP socket bound to 127.0.0.1 on a port the OS chose, which goes to *port; not listening yet,
// so that a connection to it is refused until it does.
inline UniqueFd BindLoopback(uint16_t* port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  socklen_t size = sizeof(address);
  EXPECT_EQ(getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &size), 0);
  *port = ntohs(address.sin_port);
  return fd;
}

// The next message read from `fd` (blocking); std::nullopt at the end of the stream, on a read
// error or on a protocol error.
inline std::optional<rendezvous::Message> ReceiveMessage(int fd, rendezvous::FrameDecoder& decoder) {
  char buffer[4096];
  while (true) {
    StatusOr<std::optional<rendezvous::Message>> next = decoder.Next();
    if (!next.ok()) return std::nullopt;
    if (next.value()) return std::move(*next.value());
    ssize_t got = recv(fd, buffer, sizeof(buffer), 0);
    if (got <= 0) return std::nullopt;
    decoder.Append(std::string_view(buffer, static_cast<size_t>(got)));
  }
}

}  // namespace hvdrun::testing

#endif  // HVDRUN_COMMON_PROTOCOL_RENDEZVOUS_TEST_PEER_H_
