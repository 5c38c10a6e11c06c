#include "launcher/rendezvous/rendezvous_server.h"

#include <utility>

#include "common/protocol/job_secret.h"
#include "launcher/rendezvous/rendezvous_listener.h"

namespace hvdrun {

StatusOr<std::unique_ptr<RendezvousServer>> RendezvousServer::Start(
    const std::string& bind_address, const std::string& secret_hex,
    std::function<void(const std::string&)> log, RendezvousLimits limits) {
  if (!IsValidJobSecret(secret_hex)) {
    return Status::Error("rendezvous: the job secret must be 64 lower-case hexadecimal digits");
  }
  auto listener = std::make_unique<RendezvousListener>(secret_hex, std::move(log), limits);
  if (Status status = listener->Listen(bind_address); !status.ok()) return status;
  listener->Run();
  return std::unique_ptr<RendezvousServer>(new RendezvousServer(std::move(listener)));
}

RendezvousServer::RendezvousServer(std::unique_ptr<RendezvousListener> listener)
    : listener_(std::move(listener)) {}

RendezvousServer::~RendezvousServer() = default;

uint16_t RendezvousServer::port() const { return listener_->port(); }

std::map<int, std::string> RendezvousServer::Reports() const { return listener_->store().Reports(); }

std::map<std::string, std::string> RendezvousServer::ValuesWithPrefix(std::string_view prefix) const {
  return listener_->store().ValuesWithPrefix(prefix);
}

void RendezvousServer::KeepTimelines(std::string dir) { listener_->KeepTimelines(std::move(dir)); }

void RendezvousServer::Set(std::string key, std::string value) {
  listener_->Set(std::move(key), std::move(value));
}

}  // namespace hvdrun
