#include "hvdrun/runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error_text.h"
#include "common/horovod_variables.h"
#include "common/protocol/rendezvous_client.h"
#include "runtime/backend.h"
#include "runtime/call_checks.h"
#include "runtime/collective_state.h"
#include "runtime/elastic/membership.h"
#include "runtime/process_set_table.h"
#include "runtime/request/tensor_request.h"
#include "runtime/runtime_environment.h"
#include "runtime/runtime_impl.h"
#include "runtime/runtime_options_check.h"

namespace hvdrun {

namespace {

TensorRequest AllreduceRequest(std::string name, size_t count, DataType type, ReduceOp op,
                               CompressionFormat compression) {
  TensorRequest request = Request(std::move(name), CollectiveKind::kAllreduce, count, type, op);
  request.compression = compression;
  return request;
}

// `lookup`, or std::getenv when it is null.
Runtime::EnvironmentLookup OrGetenv(const Runtime::EnvironmentLookup& lookup) {
  return lookup ? lookup : [](const char* name) { return std::getenv(name); };
}

}  // namespace

StatusOr<std::unique_ptr<Runtime>> Runtime::Init(RuntimeOptions options) {
  // An elastic worker's place in its round first: it sets the rank fields and the store.
  std::unique_ptr<ElasticMembership> elastic;
  if (options.elastic.enabled) {
    StatusOr<std::unique_ptr<ElasticMembership>> joined = ElasticMembership::Join(options);
    if (!joined.ok()) return joined.status();
    elastic = std::move(joined).value();
  }
  Status valid = ValidateRuntimeOptions(options);
  if (!valid.ok()) return valid;
  auto impl = std::make_unique<RuntimeImpl>(std::move(options));
  const OpenSocketTable before = elastic != nullptr ? OpenSockets() : OpenSocketTable();
  Status started = impl->Start();
  // An elastic round whose peers went away while it bootstrapped: the next round may do.
  if (!started.ok()) return elastic != nullptr ? AsRecoverable(started) : started;
  if (elastic != nullptr) elastic->Watch(before, OpenSockets());
  return std::unique_ptr<Runtime>(new Runtime(std::move(impl), std::move(elastic)));
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
      std::string(BackendName(options.backend)) + " backend, " +
      (options.order == CollectiveOrder::kNegotiated ? "negotiated" : "call order") + ", timeout " +
      DurationText(options.timeout);
  StatusOr<std::unique_ptr<Runtime>> runtime = Init(std::move(settings.options));
  if (runtime.ok()) {
    // An elastic worker's rank is its place in the round it joined (ElasticOptions).
    const Runtime& joined = *runtime.value();
    std::string rank = "rank " + std::to_string(joined.rank()) + " of " + std::to_string(joined.size());
    if (joined.elastic_ != nullptr) rank += " in elastic round " + std::to_string(joined.round());
    settings.horovod.messages.Print(LogLevel::kInfo,
                                    rank + ": " + described + ", allreduces over " + joined.allreduce_path());
  }
  return runtime;
}

Runtime::Runtime(std::unique_ptr<RuntimeImpl> impl, std::unique_ptr<ElasticMembership> elastic)
    : impl_(std::move(impl)),
      elastic_(std::move(elastic)),
      sets_(std::make_unique<ProcessSetTable>(impl_->options(), impl_->scope())) {}

Runtime::~Runtime() {
  if (elastic_ != nullptr) elastic_->StopWatching();  // before the backends close the sockets it watches
  sets_.reset();  // the sets' engines end before the job's, whose options (the store) they use
  impl_.reset();  // the backend ends before the worker's place in the round is given up
  elastic_.reset();
}

int Runtime::rank() const { return impl_->options().rank; }
int Runtime::size() const { return impl_->options().size; }
int Runtime::local_rank() const { return impl_->options().local_rank; }
int Runtime::local_size() const { return impl_->options().local_size; }
int Runtime::cross_rank() const { return impl_->options().cross_rank; }
int Runtime::cross_size() const { return impl_->options().cross_size; }
BackendKind Runtime::backend() const { return impl_->options().backend; }
CollectiveOrder Runtime::order() const { return impl_->options().order; }
std::string Runtime::allreduce_path() const { return impl_->allreduce_path(); }

StatusOr<bool> Runtime::MpiThreadsSupported() const {
  const std::optional<bool> multiple = impl_->mpi_threads_multiple();
  if (!multiple) {
    return Status::Error("MpiThreadsSupported: this job's backend is " + std::string(BackendName(backend())) +
                         ", not mpi (hvdrun --mpi)");
  }
  return *multiple;
}
int Runtime::round() const { return elastic_ != nullptr ? elastic_->round() : 0; }

StatusOr<bool> Runtime::HostsUpdated() const {
  if (elastic_ == nullptr) return false;
  return elastic_->HostsUpdated();
}

Status Runtime::Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                          int process_set) {
  Status valid = ValidateBuffers("Allreduce", send, recv, count, type);
  if (valid.ok()) valid = ValidateOp("Allreduce", op);
  StatusOr<SetEngine> engine = valid.ok() ? sets_->Engine(*impl_, process_set, "Allreduce") : valid;
  if (!engine.ok()) return engine.status();
  RuntimeImpl& impl = *engine.value().impl;
  return impl.Run(AllreduceRequest(impl.NextUnnamed(CollectiveKind::kAllreduce), count, type, op,
                                   impl.options().compression.format),
                  send, recv);
}

CollectiveHandle Runtime::AllreduceAsync(const void* send, void* recv, size_t count, DataType type,
                                         ReduceOp op, int process_set) {
  Status valid = ValidateBuffers("Allreduce", send, recv, count, type);
  if (valid.ok()) valid = ValidateOp("Allreduce", op);
  StatusOr<SetEngine> engine = valid.ok() ? sets_->Engine(*impl_, process_set, "Allreduce") : valid;
  if (!engine.ok()) return CollectiveHandle::State::Completed(engine.status());
  RuntimeImpl& impl = *engine.value().impl;
  return engine.value().Track(
      impl.Submit(AllreduceRequest(impl.NextUnnamed(CollectiveKind::kAllreduce), count, type, op,
                                   impl.options().compression.format),
                  send, recv));
}

Status Runtime::Allreduce(const std::string& name, const void* send, void* recv, size_t count, DataType type,
                          ReduceOp op, int process_set) {
  return AllreduceAsync(name, send, recv, count, type, op, process_set).Wait();
}

CollectiveHandle Runtime::AllreduceAsync(const std::string& name, const void* send, void* recv, size_t count,
                                         DataType type, ReduceOp op, int process_set) {
  return AllreduceAsync(name, send, recv, count, type, op, impl_->options().compression.format, process_set);
}

Status Runtime::Allreduce(const std::string& name, const void* send, void* recv, size_t count, DataType type,
                          ReduceOp op, CompressionFormat compression, int process_set) {
  return AllreduceAsync(name, send, recv, count, type, op, compression, process_set).Wait();
}

CollectiveHandle Runtime::AllreduceAsync(const std::string& name, const void* send, void* recv, size_t count,
                                         DataType type, ReduceOp op, CompressionFormat compression,
                                         int process_set) {
  return AllreduceAsync(name, send, recv, count, type, op, compression, ScaleFactors{}, process_set);
}

CollectiveHandle Runtime::AllreduceAsync(const std::string& name, const void* send, void* recv, size_t count,
                                         DataType type, ReduceOp op, CompressionFormat compression,
                                         ScaleFactors factors, int process_set) {
  const std::string call = "Allreduce('" + name + "')";
  Status valid = ValidateBuffers(call.c_str(), send, recv, count, type);
  if (valid.ok()) valid = ValidateOp(call.c_str(), op);
  if (valid.ok()) valid = ValidateFactors(call, factors.prescale, factors.postscale);
  if (valid.ok()) valid = ValidateCompression(call, compression, impl_->options().backend);
  if (valid.ok()) valid = ValidateName(call, name, impl_->negotiated());
  StatusOr<SetEngine> engine = valid.ok() ? sets_->Engine(*impl_, process_set, call) : valid;
  if (!engine.ok()) return CollectiveHandle::State::Completed(engine.status());
  RuntimeImpl& impl = *engine.value().impl;
  TensorRequest request = AllreduceRequest(impl.Named(name), count, type, op, compression);
  request.prescale = factors.prescale;
  request.postscale = factors.postscale;
  return engine.value().Track(impl.Submit(std::move(request), send, recv));
}

NegotiationCounters Runtime::negotiation_counters() const { return impl_->negotiation_counters(); }
CompressionCounters Runtime::compression_counters() const { return impl_->compression_counters(); }
const CompressionOptions& Runtime::compression() const { return impl_->options().compression; }

namespace {

// The engine of a broadcast and its root there: a job rank, which in a process set must be a member
// and becomes its place in the set.
StatusOr<SetEngine> BroadcastEngine(const ProcessSetTable& sets, RuntimeImpl& global, int process_set,
                                    const std::string& call, const void* buffer, size_t count, DataType type,
                                    int& root) {
  Status valid = ValidateBuffers(call.c_str(), buffer, buffer, count, type);
  if (!valid.ok()) return valid;
  const int size = global.options().size;
  if (root < 0 || root >= size) {
    return Status::Error(call + ": root " + std::to_string(root) + " is out of range for size " +
                         std::to_string(size));
  }
  StatusOr<SetEngine> engine = sets.Engine(global, process_set, call);
  if (!engine.ok() || engine.value().set == nullptr) return engine;
  const std::vector<int>& ranks = engine.value().set->ranks;
  const auto place = std::find(ranks.begin(), ranks.end(), root);
  if (place == ranks.end()) {
    return Status::Error(call + ": root " + std::to_string(root) + " is not in " +
                         ProcessSetText(process_set, ranks));
  }
  root = static_cast<int>(place - ranks.begin());
  return engine;
}

}  // namespace

Status Runtime::Broadcast(void* buffer, size_t count, DataType type, int root, int process_set) {
  StatusOr<SetEngine> engine =
      BroadcastEngine(*sets_, *impl_, process_set, "Broadcast", buffer, count, type, root);
  if (!engine.ok()) return engine.status();
  RuntimeImpl& impl = *engine.value().impl;
  return impl.Run(Request(impl.NextUnnamed(CollectiveKind::kBroadcast), CollectiveKind::kBroadcast, count,
                          type, ReduceOp::kSum, root),
                  buffer, buffer);
}

CollectiveHandle Runtime::BroadcastAsync(void* buffer, size_t count, DataType type, int root,
                                         int process_set) {
  StatusOr<SetEngine> engine =
      BroadcastEngine(*sets_, *impl_, process_set, "Broadcast", buffer, count, type, root);
  if (!engine.ok()) return CollectiveHandle::State::Completed(engine.status());
  RuntimeImpl& impl = *engine.value().impl;
  return engine.value().Track(
      impl.Submit(Request(impl.NextUnnamed(CollectiveKind::kBroadcast), CollectiveKind::kBroadcast, count,
                          type, ReduceOp::kSum, root),
                  buffer, buffer));
}

Status Runtime::Broadcast(const std::string& name, void* buffer, size_t count, DataType type, int root,
                          int process_set) {
  return BroadcastAsync(name, buffer, count, type, root, process_set).Wait();
}

CollectiveHandle Runtime::BroadcastAsync(const std::string& name, void* buffer, size_t count, DataType type,
                                         int root, int process_set) {
  const std::string call = "Broadcast('" + name + "')";
  Status valid = ValidateName(call, name, impl_->negotiated());
  StatusOr<SetEngine> engine =
      valid.ok() ? BroadcastEngine(*sets_, *impl_, process_set, call, buffer, count, type, root) : valid;
  if (!engine.ok()) return CollectiveHandle::State::Completed(engine.status());
  RuntimeImpl& impl = *engine.value().impl;
  return engine.value().Track(
      impl.Submit(Request(impl.Named(name), CollectiveKind::kBroadcast, count, type, ReduceOp::kSum, root),
                  buffer, buffer));
}

Status Runtime::Allgather(const void* send, void* recv, size_t count, DataType type, int process_set) {
  Status valid = ValidateBuffers("Allgather", send, recv, count, type);
  StatusOr<SetEngine> engine = valid.ok() ? sets_->Engine(*impl_, process_set, "Allgather") : valid;
  if (!engine.ok()) return engine.status();
  RuntimeImpl& impl = *engine.value().impl;
  return impl.Run(Request(impl.NextUnnamed(CollectiveKind::kAllgather), CollectiveKind::kAllgather, count,
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
                                         AllgatherResult* result, int process_set) {
  Status valid = ValidateVariedAllgather("Allgather", send, count, type, row, result);
  StatusOr<SetEngine> engine = valid.ok() ? sets_->Engine(*impl_, process_set, "Allgather") : valid;
  if (!engine.ok()) return CollectiveHandle::State::Completed(engine.status());
  RuntimeImpl& impl = *engine.value().impl;
  TensorRequest request = Request(impl.NextUnnamed(CollectiveKind::kAllgatherv), CollectiveKind::kAllgatherv,
                                  count, type, ReduceOp::kSum);
  request.row = row;
  return engine.value().Track(impl.Submit(std::move(request), send, result));
}

CollectiveHandle Runtime::AllgatherAsync(const std::string& name, const void* send, size_t count,
                                         DataType type, size_t row, AllgatherResult* result,
                                         int process_set) {
  const std::string call = "Allgather('" + name + "')";
  Status valid = ValidateVariedAllgather(call, send, count, type, row, result);
  if (valid.ok()) valid = ValidateName(call, name, impl_->negotiated());
  StatusOr<SetEngine> engine = valid.ok() ? sets_->Engine(*impl_, process_set, call) : valid;
  if (!engine.ok()) return CollectiveHandle::State::Completed(engine.status());
  RuntimeImpl& impl = *engine.value().impl;
  TensorRequest request = Request(impl.Named(name), CollectiveKind::kAllgatherv, count, type, ReduceOp::kSum);
  request.row = row;
  return engine.value().Track(impl.Submit(std::move(request), send, result));
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

// An alltoall of splits: its engine's request, or the error.
StatusOr<TensorRequest> AlltoallRequest(const SetEngine& engine, const std::string& call, std::string name,
                                        const void* send, const std::vector<uint64_t>& splits, DataType type,
                                        size_t row, const AlltoallResult* result) {
  StatusOr<size_t> count = ValidateAlltoall(call, send, splits, engine->options().size, type, row, result);
  if (!count.ok()) return count.status();
  TensorRequest request =
      Request(std::move(name), CollectiveKind::kAlltoallv, count.value(), type, ReduceOp::kSum);
  request.row = row;
  request.splits = splits;
  return request;
}

}  // namespace

CollectiveHandle Runtime::AlltoallAsync(const void* send, const std::vector<uint64_t>& splits, DataType type,
                                        size_t row, AlltoallResult* result, int process_set) {
  StatusOr<SetEngine> engine = sets_->Engine(*impl_, process_set, "Alltoall");
  if (!engine.ok()) return CollectiveHandle::State::Completed(engine.status());
  // The name is taken once the call is known to be valid, as every rank takes it.
  StatusOr<TensorRequest> request =
      AlltoallRequest(engine.value(), "Alltoall", "", send, splits, type, row, result);
  if (!request.ok()) return CollectiveHandle::State::Completed(request.status());
  request.value().name = engine.value()->NextUnnamed(CollectiveKind::kAlltoallv);
  return engine.value().Track(engine.value()->Submit(std::move(request).value(), send, result));
}

CollectiveHandle Runtime::AlltoallAsync(const std::string& name, const void* send,
                                        const std::vector<uint64_t>& splits, DataType type, size_t row,
                                        AlltoallResult* result, int process_set) {
  const std::string call = "Alltoall('" + name + "')";
  Status valid = ValidateName(call, name, impl_->negotiated());
  StatusOr<SetEngine> engine = valid.ok() ? sets_->Engine(*impl_, process_set, call) : valid;
  if (!engine.ok()) return CollectiveHandle::State::Completed(engine.status());
  StatusOr<TensorRequest> request =
      AlltoallRequest(engine.value(), call, engine.value()->Named(name), send, splits, type, row, result);
  if (!request.ok()) return CollectiveHandle::State::Completed(request.status());
  return engine.value().Track(engine.value()->Submit(std::move(request).value(), send, result));
}

CollectiveHandle Runtime::AllgatherAsync(const std::string& name, const void* send, void* recv, size_t count,
                                         DataType type, int process_set) {
  const std::string call = "Allgather('" + name + "')";
  Status valid = ValidateBuffers(call.c_str(), send, recv, count, type);
  if (valid.ok()) valid = ValidateName(call, name, impl_->negotiated());
  StatusOr<SetEngine> engine = valid.ok() ? sets_->Engine(*impl_, process_set, call) : valid;
  if (!engine.ok()) return CollectiveHandle::State::Completed(engine.status());
  return engine.value().Track(engine.value()->Submit(
      Request(engine.value()->Named(name), CollectiveKind::kAllgather, count, type, ReduceOp::kSum), send,
      recv));
}

CollectiveHandle Runtime::AlltoallAsync(const std::string& name, const void* send, void* recv, size_t count,
                                        DataType type, int process_set) {
  const std::string call = "Alltoall('" + name + "')";
  Status valid = ValidateBuffers(call.c_str(), send, recv, count, type);
  if (valid.ok() && count > 0 && send == recv) {
    valid = Status::Error(call + ": the send and receive buffers must not overlap");
  }
  if (valid.ok()) valid = ValidateName(call, name, impl_->negotiated());
  StatusOr<SetEngine> engine = valid.ok() ? sets_->Engine(*impl_, process_set, call) : valid;
  if (!engine.ok()) return CollectiveHandle::State::Completed(engine.status());
  return engine.value().Track(engine.value()->Submit(
      Request(engine.value()->Named(name), CollectiveKind::kAlltoall, count, type, ReduceOp::kSum), send,
      recv));
}

Status Runtime::Barrier(int process_set) {
  StatusOr<SetEngine> engine = sets_->Engine(*impl_, process_set, "Barrier");
  if (!engine.ok()) return engine.status();
  RuntimeImpl& impl = *engine.value().impl;
  return impl.Run(Request(impl.NextUnnamed(CollectiveKind::kBarrier), CollectiveKind::kBarrier, 0,
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
  if (nlohmann::json sets = sets_->Report(); !sets.empty()) library["process_sets"] = std::move(sets);
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

void Runtime::SetCallerShape(std::vector<int64_t> shape) { RuntimeImpl::CallerShape() = std::move(shape); }

}  // namespace hvdrun
