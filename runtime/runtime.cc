#include "hvdrun/runtime.h"

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/error_text.h"
#include "common/horovod_variables.h"
#include "common/protocol/rendezvous_client.h"
#include "runtime/backend.h"
#include "runtime/call_checks.h"
#include "runtime/collective_state.h"
#include "runtime/request/tensor_request.h"
#include "runtime/runtime_environment.h"
#include "runtime/runtime_impl.h"

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
  const CompressionFormat format = options.compression.format;
  if (CompressionFormatName(format) == "unknown") {
    return Status::Error("Runtime::Init: unknown compression format " +
                         std::to_string(static_cast<int>(format)));
  }
  if (format != CompressionFormat::kNone && options.backend == BackendKind::kNccl) {
    return Status::Error("Runtime::Init: " + std::string(CompressionFormatName(format)) +
                         " compression converts gradients in host memory; the nccl backend's are on the GPU "
                         "(compress over gloo or mpi)");
  }
  return Status::Ok();
}

}  // namespace

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

namespace {

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

namespace {

TensorRequest AllreduceRequest(std::string name, size_t count, DataType type, ReduceOp op,
                               CompressionFormat compression) {
  TensorRequest request = Request(std::move(name), CollectiveKind::kAllreduce, count, type, op);
  request.compression = compression;
  return request;
}

}  // namespace

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

namespace {

Status ValidateCompression(const std::string& call, CompressionFormat format, BackendKind backend) {
  if (CompressionFormatName(format) == "unknown") {
    return Status::Error(call + ": unknown compression format " + std::to_string(static_cast<int>(format)));
  }
  if (format != CompressionFormat::kNone && backend == BackendKind::kNccl) {
    return Status::Error(call + ": " + std::string(CompressionFormatName(format)) +
                         " compression converts values in host memory; the nccl backend's are on the GPU");
  }
  return Status::Ok();
}

// `lookup`, or std::getenv when it is null.
Runtime::EnvironmentLookup OrGetenv(const Runtime::EnvironmentLookup& lookup) {
  return lookup ? lookup : [](const char* name) { return std::getenv(name); };
}

}  // namespace

StatusOr<std::unique_ptr<Runtime>> Runtime::Init(RuntimeOptions options) {
  Status valid = ValidateOptions(options);
  if (valid.ok()) valid = ValidateNegotiation(options);
  if (!valid.ok()) return valid;
  auto impl = std::make_unique<RuntimeImpl>(std::move(options));
  Status started = impl->Start();
  if (!started.ok()) return started;
  return std::unique_ptr<Runtime>(new Runtime(std::move(impl)));
}

StatusOr<BackendKind> Runtime::BackendFromEnvironment(const EnvironmentLookup& lookup) {
  return ReadBackendFromEnvironment(OrGetenv(lookup));
}

bool Runtime::LaunchedByHvdrun(const EnvironmentLookup& lookup) {
  return hvdrun::LaunchedByHvdrun(OrGetenv(lookup));
}

StatusOr<std::unique_ptr<Runtime>> Runtime::InitFromEnvironment(
    const EnvironmentLookup& lookup, CollectiveOrder order,
    const std::function<void(RuntimeOptions&)>& adjust) {
  StatusOr<RuntimeEnvironment> environment = ReadRuntimeEnvironment(OrGetenv(lookup));
  if (!environment.ok()) return environment.status();
  RuntimeEnvironment& settings = environment.value();
  settings.options.order = order;
  if (adjust) adjust(settings.options);
  // Once per process (a --nccl job's Python rank makes two runtimes), by rank 0 for the job.
  static std::once_flag notes_shown;
  if (settings.options.rank == 0) {
    std::call_once(notes_shown, [&settings] {
      for (const std::string& note : settings.horovod.notes) {
        settings.horovod.messages.Print(LogLevel::kWarning, note);
      }
    });
  }
  const std::chrono::milliseconds connect_timeout =
      settings.horovod.start_timeout ? std::chrono::milliseconds(*settings.horovod.start_timeout)
                                     : settings.options.timeout;
  auto client = RendezvousClient::Connect(settings.rendezvous_address, settings.rendezvous_port,
                                          settings.secret_hex, connect_timeout);
  if (!client.ok()) return client.status();
  settings.options.store = std::shared_ptr<KeyValueStore>(std::move(client).value());
  const RuntimeOptions& options = settings.options;
  const std::string described =
      "rank " + std::to_string(options.rank) + " of " + std::to_string(options.size) + ": " +
      std::string(BackendName(options.backend)) + " backend, " +
      (options.order == CollectiveOrder::kNegotiated ? "negotiated" : "call order") + ", timeout " +
      DurationText(options.timeout);
  StatusOr<std::unique_ptr<Runtime>> runtime = Init(std::move(settings.options));
  if (runtime.ok()) {
    settings.horovod.messages.Print(LogLevel::kInfo,
                                    described + ", allreduces over " + runtime.value()->allreduce_path());
  }
  return runtime;
}

Runtime::Runtime(std::unique_ptr<RuntimeImpl> impl) : impl_(std::move(impl)) {}

Runtime::~Runtime() = default;

int Runtime::rank() const { return impl_->options().rank; }
int Runtime::size() const { return impl_->options().size; }
int Runtime::local_rank() const { return impl_->options().local_rank; }
int Runtime::local_size() const { return impl_->options().local_size; }
int Runtime::cross_rank() const { return impl_->options().cross_rank; }
int Runtime::cross_size() const { return impl_->options().cross_size; }
BackendKind Runtime::backend() const { return impl_->options().backend; }
CollectiveOrder Runtime::order() const { return impl_->options().order; }
std::string Runtime::allreduce_path() const { return impl_->allreduce_path(); }

Status Runtime::Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) {
  Status valid = ValidateBuffers("Allreduce", send, recv, count, type);
  if (valid.ok()) valid = ValidateOp("Allreduce", op);
  if (!valid.ok()) return valid;
  return impl_->Run(AllreduceRequest(impl_->NextUnnamed(CollectiveKind::kAllreduce), count, type, op,
                                     impl_->options().compression.format),
                    send, recv);
}

CollectiveHandle Runtime::AllreduceAsync(const void* send, void* recv, size_t count, DataType type,
                                         ReduceOp op) {
  Status valid = ValidateBuffers("Allreduce", send, recv, count, type);
  if (valid.ok()) valid = ValidateOp("Allreduce", op);
  if (!valid.ok()) return CollectiveHandle::State::Completed(std::move(valid));
  return impl_->Submit(AllreduceRequest(impl_->NextUnnamed(CollectiveKind::kAllreduce), count, type, op,
                                        impl_->options().compression.format),
                       send, recv);
}

Status Runtime::Allreduce(const std::string& name, const void* send, void* recv, size_t count, DataType type,
                          ReduceOp op) {
  return AllreduceAsync(name, send, recv, count, type, op).Wait();
}

CollectiveHandle Runtime::AllreduceAsync(const std::string& name, const void* send, void* recv, size_t count,
                                         DataType type, ReduceOp op) {
  return AllreduceAsync(name, send, recv, count, type, op, impl_->options().compression.format);
}

Status Runtime::Allreduce(const std::string& name, const void* send, void* recv, size_t count, DataType type,
                          ReduceOp op, CompressionFormat compression) {
  return AllreduceAsync(name, send, recv, count, type, op, compression).Wait();
}

CollectiveHandle Runtime::AllreduceAsync(const std::string& name, const void* send, void* recv, size_t count,
                                         DataType type, ReduceOp op, CompressionFormat compression) {
  const std::string call = "Allreduce('" + name + "')";
  Status valid = ValidateBuffers(call.c_str(), send, recv, count, type);
  if (valid.ok()) valid = ValidateOp(call.c_str(), op);
  if (valid.ok()) valid = ValidateCompression(call, compression, impl_->options().backend);
  if (valid.ok()) valid = ValidateName(call, name, impl_->negotiated());
  if (!valid.ok()) return CollectiveHandle::State::Completed(std::move(valid));
  return impl_->Submit(AllreduceRequest(name, count, type, op, compression), send, recv);
}

NegotiationCounters Runtime::negotiation_counters() const { return impl_->negotiation_counters(); }
CompressionCounters Runtime::compression_counters() const { return impl_->compression_counters(); }
const CompressionOptions& Runtime::compression() const { return impl_->options().compression; }

namespace {

Status ValidateBroadcast(const std::string& call, const void* buffer, size_t count, DataType type, int root,
                         int size) {
  Status valid = ValidateBuffers(call.c_str(), buffer, buffer, count, type);
  if (!valid.ok()) return valid;
  if (root < 0 || root >= size) {
    return Status::Error(call + ": root " + std::to_string(root) + " is out of range for size " +
                         std::to_string(size));
  }
  return Status::Ok();
}

}  // namespace

Status Runtime::Broadcast(void* buffer, size_t count, DataType type, int root) {
  Status valid = ValidateBroadcast("Broadcast", buffer, count, type, root, size());
  if (!valid.ok()) return valid;
  return impl_->Run(Request(impl_->NextUnnamed(CollectiveKind::kBroadcast), CollectiveKind::kBroadcast, count,
                            type, ReduceOp::kSum, root),
                    buffer, buffer);
}

CollectiveHandle Runtime::BroadcastAsync(void* buffer, size_t count, DataType type, int root) {
  Status valid = ValidateBroadcast("Broadcast", buffer, count, type, root, size());
  if (!valid.ok()) return CollectiveHandle::State::Completed(std::move(valid));
  return impl_->Submit(Request(impl_->NextUnnamed(CollectiveKind::kBroadcast), CollectiveKind::kBroadcast,
                               count, type, ReduceOp::kSum, root),
                       buffer, buffer);
}

Status Runtime::Broadcast(const std::string& name, void* buffer, size_t count, DataType type, int root) {
  return BroadcastAsync(name, buffer, count, type, root).Wait();
}

CollectiveHandle Runtime::BroadcastAsync(const std::string& name, void* buffer, size_t count, DataType type,
                                         int root) {
  const std::string call = "Broadcast('" + name + "')";
  Status valid = ValidateBroadcast(call, buffer, count, type, root, size());
  if (valid.ok()) valid = ValidateName(call, name, impl_->negotiated());
  if (!valid.ok()) return CollectiveHandle::State::Completed(std::move(valid));
  return impl_->Submit(Request(name, CollectiveKind::kBroadcast, count, type, ReduceOp::kSum, root), buffer,
                       buffer);
}

Status Runtime::Allgather(const void* send, void* recv, size_t count, DataType type) {
  Status valid = ValidateBuffers("Allgather", send, recv, count, type);
  if (!valid.ok()) return valid;
  return impl_->Run(Request(impl_->NextUnnamed(CollectiveKind::kAllgather), CollectiveKind::kAllgather, count,
                            type, ReduceOp::kSum),
                    send, recv);
}

namespace {

Status ValidateVariedAllgather(const std::string& call, const void* send, size_t count, DataType type,
                               size_t row, const AllgatherResult* result) {
  Status valid = ValidateBuffers(call.c_str(), send, send, count, type);
  if (!valid.ok()) return valid;
  if (result == nullptr) return Status::Error(call + ": the result is null");
  if (row == 0 || count % row != 0) {
    return Status::Error(call + ": " + std::to_string(count) + " elements are not whole rows of " +
                         std::to_string(row));
  }
  return Status::Ok();
}

}  // namespace

CollectiveHandle Runtime::AllgatherAsync(const void* send, size_t count, DataType type, size_t row,
                                         AllgatherResult* result) {
  Status valid = ValidateVariedAllgather("Allgather", send, count, type, row, result);
  if (!valid.ok()) return CollectiveHandle::State::Completed(std::move(valid));
  TensorRequest request = Request(impl_->NextUnnamed(CollectiveKind::kAllgatherv),
                                  CollectiveKind::kAllgatherv, count, type, ReduceOp::kSum);
  request.row = row;
  return impl_->Submit(std::move(request), send, result);
}

CollectiveHandle Runtime::AllgatherAsync(const std::string& name, const void* send, size_t count,
                                         DataType type, size_t row, AllgatherResult* result) {
  const std::string call = "Allgather('" + name + "')";
  Status valid = ValidateVariedAllgather(call, send, count, type, row, result);
  if (valid.ok()) valid = ValidateName(call, name, impl_->negotiated());
  if (!valid.ok()) return CollectiveHandle::State::Completed(std::move(valid));
  TensorRequest request = Request(name, CollectiveKind::kAllgatherv, count, type, ReduceOp::kSum);
  request.row = row;
  return impl_->Submit(std::move(request), send, result);
}

namespace {

// The number of elements an alltoall sends, after checking its splits; an error names `call`.
StatusOr<size_t> ValidateAlltoall(const std::string& call, const void* send,
                                  const std::vector<uint64_t>& splits, int size, DataType type, size_t row,
                                  const AlltoallResult* result) {
  if (result == nullptr) return Status::Error(call + ": the result is null");
  if (splits.size() != static_cast<size_t>(size)) {
    return Status::Error(call + ": " + std::to_string(splits.size()) + " splits for a job of " +
                         std::to_string(size) + " ranks (one per rank)");
  }
  size_t count = 0;
  for (size_t j = 0; j < splits.size(); ++j) {
    if (row == 0 || splits[j] % row != 0) {
      return Status::Error(call + ": split " + std::to_string(j) + " of " + std::to_string(splits[j]) +
                           " elements is not whole rows of " + std::to_string(row));
    }
    count += static_cast<size_t>(splits[j]);
  }
  Status valid = ValidateBuffers(call.c_str(), send, send, count, type);
  if (!valid.ok()) return valid;
  return count;
}

}  // namespace

CollectiveHandle Runtime::AlltoallAsync(const void* send, const std::vector<uint64_t>& splits, DataType type,
                                        size_t row, AlltoallResult* result) {
  StatusOr<size_t> count = ValidateAlltoall("Alltoall", send, splits, size(), type, row, result);
  if (!count.ok()) return CollectiveHandle::State::Completed(count.status());
  TensorRequest request = Request(impl_->NextUnnamed(CollectiveKind::kAlltoallv), CollectiveKind::kAlltoallv,
                                  count.value(), type, ReduceOp::kSum);
  request.row = row;
  request.splits = splits;
  return impl_->Submit(std::move(request), send, result);
}

CollectiveHandle Runtime::AlltoallAsync(const std::string& name, const void* send,
                                        const std::vector<uint64_t>& splits, DataType type, size_t row,
                                        AlltoallResult* result) {
  const std::string call = "Alltoall('" + name + "')";
  StatusOr<size_t> count = ValidateAlltoall(call, send, splits, size(), type, row, result);
  Status valid = count.ok() ? ValidateName(call, name, impl_->negotiated()) : count.status();
  if (!valid.ok()) return CollectiveHandle::State::Completed(std::move(valid));
  TensorRequest request = Request(name, CollectiveKind::kAlltoallv, count.value(), type, ReduceOp::kSum);
  request.row = row;
  request.splits = splits;
  return impl_->Submit(std::move(request), send, result);
}

CollectiveHandle Runtime::AllgatherAsync(const std::string& name, const void* send, void* recv, size_t count,
                                         DataType type) {
  const std::string call = "Allgather('" + name + "')";
  Status valid = ValidateBuffers(call.c_str(), send, recv, count, type);
  if (valid.ok()) valid = ValidateName(call, name, impl_->negotiated());
  if (!valid.ok()) return CollectiveHandle::State::Completed(std::move(valid));
  return impl_->Submit(Request(name, CollectiveKind::kAllgather, count, type, ReduceOp::kSum), send, recv);
}

CollectiveHandle Runtime::AlltoallAsync(const std::string& name, const void* send, void* recv, size_t count,
                                        DataType type) {
  const std::string call = "Alltoall('" + name + "')";
  Status valid = ValidateBuffers(call.c_str(), send, recv, count, type);
  if (valid.ok() && count > 0 && send == recv) {
    valid = Status::Error(call + ": the send and receive buffers must not overlap");
  }
  if (valid.ok()) valid = ValidateName(call, name, impl_->negotiated());
  if (!valid.ok()) return CollectiveHandle::State::Completed(std::move(valid));
  return impl_->Submit(Request(name, CollectiveKind::kAlltoall, count, type, ReduceOp::kSum), send, recv);
}

Status Runtime::Barrier() {
  return impl_->Run(Request(impl_->NextUnnamed(CollectiveKind::kBarrier), CollectiveKind::kBarrier, 0,
                            DataType::kInt32, ReduceOp::kSum),
                    nullptr, nullptr);
}

StatusOr<int> Runtime::Join() {
  if (!impl_->negotiated()) {
    return Status::Error(
        "Join needs a Runtime initialized with CollectiveOrder::kNegotiated (RuntimeOptions::order, on "
        "every rank): in call order every rank makes the same collectives");
  }
  return impl_->Join();
}

Status Runtime::SendReport(const std::string& json) {
  nlohmann::json library = impl_->LibraryReport();
  if (!library.is_null()) {
    nlohmann::json report = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (report.is_object() && !report.contains("libhvdrun")) {
      report["libhvdrun"] = std::move(library);
      return impl_->options().store->SendReport(impl_->options().rank, report.dump());
    }
  }
  return impl_->options().store->SendReport(impl_->options().rank, json);
}

Status Runtime::BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) {
  Status valid = ValidateBuffers("BaselineAllreduce", buffer, buffer, count, type);
  if (valid.ok()) valid = ValidateOp("BaselineAllreduce", op);
  if (!valid.ok()) return valid;
  return impl_->RunBaseline(Request(impl_->NextUnnamed(CollectiveKind::kBaselineAllreduce),
                                    CollectiveKind::kBaselineAllreduce, count, type, op),
                            buffer);
}

void Runtime::SetCallerStream(void* cuda_stream) { RuntimeImpl::CallerStream() = cuda_stream; }

}  // namespace hvdrun
