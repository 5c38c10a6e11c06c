#include "launcher/rendezvous/rendezvous_listener.h"

#include <boost/asio/post.hpp>
#include <utility>
#include <vector>

#include "common/error_text.h"
#include "launcher/rendezvous/rendezvous_connection.h"

namespace hvdrun {

namespace asio = boost::asio;
using asio::ip::tcp;

RendezvousListener::RendezvousListener(std::string secret_hex, std::function<void(const std::string&)> log,
                                       RendezvousLimits limits)
    : acceptor_(io_), secret_(std::move(secret_hex)), log_(std::move(log)), limits_(limits), store_(limits) {}

Status RendezvousListener::Listen(const std::string& bind_address) {
  boost::system::error_code ec;
  asio::ip::address address = asio::ip::make_address(bind_address, ec);
  if (ec) {
    return Status::Error("rendezvous: cannot listen on '" + PrintableText(bind_address) +
                         "': not an IP address (give one of this machine's addresses, e.g. 127.0.0.1)");
  }
  if (address.is_unspecified()) {
    return Status::Error("rendezvous: refusing to listen on the wildcard address " + bind_address +
                         ", which would expose the service on every network; give one of this "
                         "machine's addresses");
  }
  tcp::endpoint endpoint(address, 0);
  if (acceptor_.open(endpoint.protocol(), ec); !ec) {
    if (acceptor_.bind(endpoint, ec); !ec) {
      if (acceptor_.listen(asio::socket_base::max_listen_connections, ec); !ec) {
        port_ = acceptor_.local_endpoint(ec).port();
      }
    }
  }
  if (ec) return Status::Error("rendezvous: cannot listen on " + bind_address + ": " + ec.message());
  return Status::Ok();
}

void RendezvousListener::Run() {
  Accept();
  thread_ = std::thread([this] { io_.run(); });
}

void RendezvousListener::Stop() {
  if (!thread_.joinable()) return;
  asio::post(io_, [this] { Shutdown(); });
  thread_.join();
}

std::optional<rendezvous::Message> RendezvousListener::Answer(const rendezvous::Message& request) {
  uint64_t version = store_.version();
  std::optional<rendezvous::Message> answer = store_.Answer(request);
  if (store_.version() != version) {
    // A copy: a connection that finishes its wait may leave the set meanwhile.
    std::vector<std::shared_ptr<RendezvousConnection>> waiting(waiting_.begin(), waiting_.end());
    for (const std::shared_ptr<RendezvousConnection>& connection : waiting) connection->CheckWait();
  }
  return answer;
}

void RendezvousListener::Set(std::string key, std::string value) {
  asio::post(io_, [this, key = std::move(key), value = std::move(value)] {
    if (!stopping_) Answer(rendezvous::Message{rendezvous::SetRequest{key, value}});
  });
}

void RendezvousListener::Forget(const std::shared_ptr<RendezvousConnection>& connection) {
  waiting_.erase(connection);
  connections_.erase(connection);
}

void RendezvousListener::Accept() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (stopping_ || !acceptor_.is_open()) return;
    if (!ec) {
      if (connections_.size() >= limits_.max_connections) {
        Log("hvdrun: rendezvous: refused " + RendezvousConnection::PeerText(socket) +
            ": too many connections (limit " + std::to_string(limits_.max_connections) + ")");
        boost::system::error_code ignored;
        socket.close(ignored);
      } else {
        auto connection = std::make_shared<RendezvousConnection>(*this, std::move(socket));
        connections_.insert(connection);
        connection->Start();
      }
    }
    // Errors such as running out of file descriptors are transient: keep accepting.
    Accept();
  });
}

void RendezvousListener::Shutdown() {
  stopping_ = true;
  boost::system::error_code ec;
  acceptor_.close(ec);
  for (const std::shared_ptr<RendezvousConnection>& connection : connections_) connection->Stop();
  connections_.clear();
  waiting_.clear();
  io_.stop();
}

}  // namespace hvdrun
