#include "runtime/runtime_options_check.h"

#include <string>

namespace hvdrun {
namespace {

Status OutOfRange(const char* what, int value, const char* size_name, int size) {
  return Status::Error("Runtime::Init: " + std::string(what) + " " + std::to_string(value) +
                       " is out of range for " + size_name + " " + std::to_string(size) + " (0.." +
                       std::to_string(size - 1) + ")");
}

Status ValidateOptions(const RuntimeOptions& options) {
  if (BackendName(options.backend) == "unknown") {
    return Status::Error("Runtime::Init: unknown backend " +
                         std::to_string(static_cast<int>(options.backend)));
  }
  if (options.size < 1) {
    return Status::Error("Runtime::Init: size " + std::to_string(options.size) + " is not positive");
  }
  if (options.rank < 0 || options.rank >= options.size) {
    return OutOfRange("rank", options.rank, "size", options.size);
  }
  if (options.local_size < 1 || options.local_size > options.size) {
    return Status::Error("Runtime::Init: local_size " + std::to_string(options.local_size) +
                         " is not in 1.." + std::to_string(options.size));
  }
  if (options.local_rank < 0 || options.local_rank >= options.local_size) {
    return OutOfRange("local_rank", options.local_rank, "local_size", options.local_size);
  }
  if (options.cross_size < 1 || options.cross_size > options.size) {
    return Status::Error("Runtime::Init: cross_size " + std::to_string(options.cross_size) +
                         " is not in 1.." + std::to_string(options.size));
  }
  if (options.cross_rank < 0 || options.cross_rank >= options.cross_size) {
    return OutOfRange("cross_rank", options.cross_rank, "cross_size", options.cross_size);
  }
  if (options.store == nullptr) {
    return Status::Error(
        "Runtime::Init: no store: pass a KeyValueStore shared by every rank, or use InitFromEnvironment "
        "under "
        "hvdrun");
  }
  if (options.host_address.empty()) return Status::Error("Runtime::Init: host_address is empty");
  if (options.timeout.count() <= 0) {
    return Status::Error("Runtime::Init: timeout " + std::to_string(options.timeout.count()) +
                         " ms is not positive");
  }
  return ValidateCompression("Runtime::Init", options.compression.format, options.backend);
}

Status ValidateNegotiation(const RuntimeOptions& options) {
  if (options.order != CollectiveOrder::kNegotiated) return Status::Ok();
  if (options.negotiation.cycle_time.count() < 0) {
    return Status::Error("Runtime::Init: negotiation cycle_time " +
                         std::to_string(options.negotiation.cycle_time.count()) + " us is negative");
  }
  if (options.negotiation.stall_warning.count() <= 0) {
    return Status::Error("Runtime::Init: negotiation stall_warning " +
                         std::to_string(options.negotiation.stall_warning.count()) + " ms is not positive");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateCompression(const std::string& call, CompressionFormat format, BackendKind backend) {
  if (CompressionFormatName(format) == "unknown") {
    return Status::Error(call + ": unknown compression format " + std::to_string(static_cast<int>(format)));
  }
  if (format != CompressionFormat::kNone && backend == BackendKind::kNccl) {
    return Status::Error(call + ": " + std::string(CompressionFormatName(format)) +
                         " compression converts values in host memory; the nccl backend's are on the GPU "
                         "(compress over gloo or mpi)");
  }
  return Status::Ok();
}

Status ValidateRuntimeOptions(const RuntimeOptions& options) {
  Status valid = ValidateOptions(options);
  if (valid.ok()) valid = ValidateNegotiation(options);
  return valid;
}

}  // namespace hvdrun
