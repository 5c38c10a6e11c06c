// RendezvousListener: the listening half of hvdrun's rendezvous service — the Boost.Asio acceptor
// on one address, the thread that runs every connection's handlers, the open connections (and
// those waiting in get/wait), and the job's RendezvousStore they share. RendezvousServer
// (rendezvous_server.h) owns it and is its public face; RendezvousConnection
// (rendezvous_connection.h) is the per-connection half.
//
// Thread safety: the owner's thread calls Listen, then Run, then Stop (or destroys it), and may
// read store() at any time (RendezvousStore's contract); every other method is for connections and
// runs on the service thread.
#ifndef HVDRUN_LAUNCHER_RENDEZVOUS_RENDEZVOUS_LISTENER_H_
#define HVDRUN_LAUNCHER_RENDEZVOUS_RENDEZVOUS_LISTENER_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "common/protocol/rendezvous_protocol.h"
#include "hvdrun/status.h"
#include "launcher/rendezvous/rendezvous_server.h"
#include "launcher/rendezvous/rendezvous_store.h"

namespace hvdrun {

class RendezvousConnection;

class RendezvousListener {
 public:
  // `log` receives one line per refused or closed-on-error connection, on the service thread.
  RendezvousListener(std::string secret_hex, std::function<void(const std::string&)> log,
                     RendezvousLimits limits);
  // Stops the thread if it runs.
  ~RendezvousListener() { Stop(); }
  RendezvousListener(const RendezvousListener&) = delete;
  RendezvousListener& operator=(const RendezvousListener&) = delete;

  // Binds bind_address (an IP literal, not a wildcard) on a port the OS chooses, and listens.
  Status Listen(const std::string& bind_address);
  // Starts accepting, on a thread of the service's own.
  void Run();
  // Stops accepting, closes every connection (a client waiting in get/wait is told why first) and
  // waits for the thread.
  void Stop();

  uint16_t port() const { return port_; }
  const RendezvousStore& store() const { return store_; }
  void KeepTimelines(std::string dir) { store_.KeepTimelines(std::move(dir)); }
  // From the owner's thread: key = value, set on the service thread as a rank's set would be.
  void Set(std::string key, std::string value);

  // For connections, on the service thread.
  boost::asio::io_context& io() { return io_; }
  const std::string& secret() const { return secret_; }
  const RendezvousLimits& limits() const { return limits_; }
  void Log(const std::string& line) {
    if (log_) log_(line);
  }
  // The store's answer to `request` (RendezvousStore::Answer); a request that changed the table
  // lets every waiting connection check its keys again.
  std::optional<rendezvous::Message> Answer(const rendezvous::Message& request);
  rendezvous::Message TimedOut(const rendezvous::Message& request) const { return store_.TimedOut(request); }
  void StartWaiting(const std::shared_ptr<RendezvousConnection>& connection) { waiting_.insert(connection); }
  void StopWaiting(const std::shared_ptr<RendezvousConnection>& connection) { waiting_.erase(connection); }
  // The connection has closed.
  void Forget(const std::shared_ptr<RendezvousConnection>& connection);

 private:
  void Accept();
  void Shutdown();

  // Declared first, destroyed last: handlers it still holds may own connections.
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::thread thread_;
  uint16_t port_ = 0;
  const std::string secret_;
  const std::function<void(const std::string&)> log_;
  const RendezvousLimits limits_;
  RendezvousStore store_;

  // Touched on the service thread only.
  std::set<std::shared_ptr<RendezvousConnection>> connections_;
  std::set<std::shared_ptr<RendezvousConnection>> waiting_;
  bool stopping_ = false;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_RENDEZVOUS_RENDEZVOUS_LISTENER_H_
