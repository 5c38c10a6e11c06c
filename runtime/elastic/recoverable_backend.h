// RecoverableBackend: an elastic runtime's backend (RuntimeOptions::elastic). Every call goes to the
// backend it wraps (runtime/forwarding_backend.h); a call that fails, with a Status or by throwing (a
// peer gone, a connection reset, a wait that timed out), fails with ErrorKind::kRecoverable instead,
// so that the program re-initializes rather than ending: the one line says what the wrapped backend
// said. Never throws.
//
// Thread-safety: as the wrapped backend's.
#ifndef HVDRUN_RUNTIME_ELASTIC_RECOVERABLE_BACKEND_H_
#define HVDRUN_RUNTIME_ELASTIC_RECOVERABLE_BACKEND_H_

#include <memory>
#include <utility>

#include "hvdrun/status.h"
#include "runtime/backend.h"
#include "runtime/forwarding_backend.h"

namespace hvdrun {

class RecoverableBackend final : public ForwardingBackend {
 public:
  explicit RecoverableBackend(std::unique_ptr<Backend> backend) : ForwardingBackend(std::move(backend)) {}

 private:
  // The call's failure, thrown or returned, as recoverable.
  Status Forward(const ForwardedCall& call) override;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_ELASTIC_RECOVERABLE_BACKEND_H_
