#include "runtime/call_checks.h"

#include <cmath>
#include <string>
#include <utility>

namespace hvdrun {

Status ValidateBuffers(const char* call, const void* send, const void* recv, size_t count, DataType type) {
  if (DataTypeSize(type) == 0) {
    return Status::Error(std::string(call) + ": unknown data type " + std::to_string(static_cast<int>(type)));
  }
  if (count > 0 && (send == nullptr || recv == nullptr)) {
    return Status::Error(std::string(call) + ": null buffer for " + std::to_string(count) + " elements");
  }
  return Status::Ok();
}

Status ValidateOp(const char* call, ReduceOp op) {
  if (ReduceOpName(op) == "unknown") {
    return Status::Error(std::string(call) + ": unknown reduce op " + std::to_string(static_cast<int>(op)));
  }
  return Status::Ok();
}

TensorRequest Request(std::string name, CollectiveKind kind, size_t count, DataType type, ReduceOp op,
                      int root) {
  TensorRequest request;
  request.name = std::move(name);
  request.kind = kind;
  request.type = type;
  request.op = op;
  request.count = count;
  request.root = root;
  return request;
}

Status ValidateName(const std::string& call, const std::string& name, bool negotiated) {
  if (!negotiated) {
    return Status::Error(call +
                         ": named collectives need a Runtime initialized with CollectiveOrder::kNegotiated "
                         "(RuntimeOptions::order, on every rank)");
  }
  if (name.empty() || name.front() == '(') {
    return Status::Error(call +
                         ": a name must be non-empty and must not begin with '(', which marks "
                         "the names of unnamed calls");
  }
  return Status::Ok();
}

Status ValidateFactors(const std::string& call, double prescale, double postscale) {
  for (const auto& [what, factor] : {std::pair{"prescale", prescale}, std::pair{"postscale", postscale}}) {
    if (!std::isfinite(factor)) {
      return Status::Error(call + ": the " + what + " factor " + std::to_string(factor) +
                           " is not a finite number");
    }
  }
  return Status::Ok();
}

}  // namespace hvdrun
