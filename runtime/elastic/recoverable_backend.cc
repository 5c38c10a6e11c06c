#include "runtime/elastic/recoverable_backend.h"

#include <exception>
#include <string>

#include "hvdrun/error_kind.h"

namespace hvdrun {

Status RecoverableBackend::Forward(const ForwardedCall& call) {
  try {
    return AsRecoverable(call.Run());
  } catch (const std::exception& e) {
    return ErrorOfKind(ErrorKind::kRecoverable, std::string(call.op()) + " failed: " + e.what());
  }
}

}  // namespace hvdrun
