#include "runtime/call_checks.h"

#include <cmath>
#include <string>
#include <utility>

#include "runtime/negotiation/readiness_table.h"

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

Status AttachShape(TensorRequest& request, const std::vector<int64_t>& shape) {
  if (shape.empty() || request.kind == CollectiveKind::kBarrier ||
      request.kind == CollectiveKind::kBaselineAllreduce) {
    return Status::Ok();
  }
  const std::string call = std::string(CollectiveOpName(request.kind)) + " '" + request.name + "'";
  if (shape.size() > kMaxShapeDimensions) {
    return Status::Error(call + ": a shape of " + std::to_string(shape.size()) + " dimensions is more than " +
                         std::to_string(kMaxShapeDimensions));
  }
  uint64_t elements = 1;
  for (int64_t dimension : shape) {
    if (dimension < 0) {
      return Status::Error(call + ": the shape " + ShapeText(shape) + " has a negative dimension");
    }
    elements *= static_cast<uint64_t>(dimension);
  }
  const bool whole_tensor = request.kind == CollectiveKind::kAllreduce ||
                            request.kind == CollectiveKind::kBroadcast ||
                            request.kind == CollectiveKind::kReducescatter;
  if (whole_tensor && elements != request.count) {
    return Status::Error(call + ": the shape " + ShapeText(shape) + " holds " + std::to_string(elements) +
                         " elements, not the call's " + std::to_string(request.count));
  }
  request.shape = shape;
  return Status::Ok();
}

}  // namespace hvdrun
