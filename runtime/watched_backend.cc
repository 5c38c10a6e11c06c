#include "runtime/watched_backend.h"

#include <utility>

namespace hvdrun {

WatchedBackend::WatchedBackend(std::unique_ptr<Backend> backend, WatchdogSettings settings)
    : ForwardingBackend(std::move(backend)), watchdog_(std::move(settings), &next()) {}

WatchedBackend::WatchedBackend(Backend& backend, WatchdogSettings settings)
    : ForwardingBackend(backend), watchdog_(std::move(settings), &next()) {}

Status WatchedBackend::Forward(const ForwardedCall& call) {
  watchdog_.Enter(WatchedCall{label_, call.op(), call.bytes()});
  return watchdog_.Exit(call.Run());
}

void LabelWatchedCalls(Backend& backend, std::string label) {
  if (auto* watched = dynamic_cast<WatchedBackend*>(&backend)) watched->set_label(std::move(label));
}

}  // namespace hvdrun
