#include "runtime/runtime_impl.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "common/progress/rank_board.h"

#include "runtime/arrival_check.h"
#include "runtime/call_checks.h"
#include "runtime/collective_state.h"
#include "runtime/elastic/recoverable_backend.h"
#include "runtime/shm/shm_backend.h"
#include "runtime/watched_backend.h"

namespace hvdrun {

RuntimeImpl::RuntimeImpl(RuntimeOptions options, ProcessSetPlace place)
    : options_(std::move(options)),
      place_(std::move(place)),
      compressed_(options_.rank, options_.size, options_.compression),
      stream_(options_.order == CollectiveOrder::kNegotiated
                  ? std::make_unique<NegotiatedStream>(options_, &compressed_)
                  : nullptr),
      call_order_(stream_ == nullptr ? std::make_unique<CallOrderQueue>(
                                           [this](const Pending& pending) { return RunGuarded(pending); })
                                     : nullptr) {}

RuntimeImpl::~RuntimeImpl() {
  if (stream_ != nullptr) stream_->RequestStop();
  if (call_order_ != nullptr) call_order_->Stop();
  if (thread_.joinable()) thread_.join();
  CloseTimeline();
}

Status RuntimeImpl::PinThread() const {
  if (options_.collective_thread_cpu < 0) return Status::Ok();
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  CPU_SET(options_.collective_thread_cpu, &cpus);
  if (const int error = ::pthread_setaffinity_np(::pthread_self(), sizeof(cpus), &cpus); error != 0) {
    return Status::Error("cannot pin the collective thread to core " +
                         std::to_string(options_.collective_thread_cpu) +
                         " (HOROVOD_THREAD_AFFINITY): " + std::strerror(error));
  }
  return Status::Ok();
}

Status RuntimeImpl::Start() {
  // The progress board is mapped now, so that a rank stuck before its first collective shows one.
  progress::RankBoard();
  thread_ = std::thread([this] { ThreadMain(); });
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return started_; });
  return broken_;
}

void*& RuntimeImpl::CallerStream() {
  thread_local void* stream = nullptr;
  return stream;
}

std::vector<int64_t>& RuntimeImpl::CallerShape() {
  thread_local std::vector<int64_t> shape;
  return shape;
}

StatusOr<BackendMemory::ReadyMark> RuntimeImpl::MarkReady() {
  return backend_->memory().MarkReady(CallerStream());
}

void RuntimeImpl::Publish(TensorRequest& request) {
  request.progress_sequence =
      progress::PublishSubmitted(request.name, CollectiveOpName(request.kind), request.bytes());
}

Status RuntimeImpl::Refused(const TensorRequest& request, Status status) {
  progress::PublishPhase(request.progress_sequence, protocol::CollectivePhase::kFailed);
  return status;
}

Status RuntimeImpl::Broken() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_.ok()) return broken_;
  }
  return call_order_ != nullptr ? call_order_->broken() : Status::Ok();
}

CollectiveHandle RuntimeImpl::Submit(TensorRequest request, const void* send, void* recv) {
  Publish(request);
  if (Status broken = Broken(); !broken.ok()) {
    return CollectiveHandle::State::Completed(Refused(request, broken));
  }
  if (Status shaped = negotiated() ? AttachShape(request, CallerShape()) : Status::Ok(); !shaped.ok()) {
    return CollectiveHandle::State::Completed(Refused(request, shaped));
  }
  StatusOr<BackendMemory::ReadyMark> ready = MarkReady();
  if (!ready.ok()) return CollectiveHandle::State::Completed(Refused(request, ready.status()));
  if (stream_ != nullptr) return stream_->Submit(std::move(request), send, recv, std::move(ready).value());
  return call_order_->Submit(Pending{std::move(request), send, recv, std::move(ready).value(), nullptr});
}

StatusOr<int> RuntimeImpl::Join() {
  uint64_t unnamed_calls = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_.ok()) return broken_;
    unnamed_calls = unnamed_calls_;
  }
  StatusOr<ReadinessTable::JoinDone> done = stream_->Join(unnamed_calls);
  if (!done.ok()) return done.status();
  std::lock_guard<std::mutex> lock(mutex_);
  unnamed_calls_ = done.value().unnamed_calls;
  return done.value().last_rank;
}

std::string RuntimeImpl::NextUnnamed(CollectiveKind kind) {
  // By CollectiveKind's value.
  static constexpr const char* kNames[] = {"allreduce", "broadcast",          "allgather",
                                           "barrier",   "baseline allreduce", "allgather",
                                           "alltoall",  "alltoall",           "reducescatter"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(CollectiveKind::kReducescatter) + 1,
                "a name for every CollectiveKind");
  uint64_t call = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    call = ++unnamed_calls_;
  }
  std::string name = "(unnamed ";
  name += kNames[static_cast<size_t>(kind)];
  name += ' ';
  name += std::to_string(call);
  name += ')';
  return Named(std::move(name));
}

std::string RuntimeImpl::Named(std::string name) const {
  if (place_.id == 0) return name;
  return name + " [process set " + std::to_string(place_.id) + "]";
}

NegotiationCounters RuntimeImpl::negotiation_counters() const {
  return stream_ != nullptr ? stream_->counters() : NegotiationCounters{};
}

nlohmann::json RuntimeImpl::LibraryReport() const {
  nlohmann::json report = stream_ != nullptr ? stream_->ReportJson() : nlohmann::json();
  const CompressionOptions& compression = options_.compression;
  const CompressionCounters counters = compressed_.counters();
  // "format" is the job's; allreduces that chose their own count in the bytes too.
  if (compression.format != CompressionFormat::kNone || counters.compressed_bytes > 0) {
    report["compression"] = {{"format", CompressionFormatName(compression.format)},
                             {"scaling", compression.scaling},
                             {"safe_cast", compression.safe_cast},
                             {"float32_sums", compression.float32_sums},
                             {"error_feedback", compression.error_feedback},
                             {"compressed_bytes", counters.compressed_bytes},
                             {"wire_bytes", counters.wire_bytes},
                             {"float32_wire_bytes", counters.float32_wire_bytes}};
  }
  if (!report.is_null()) report["allreduce_path"] = allreduce_path_;
  return report;
}

Status RuntimeImpl::Run(TensorRequest request, const void* send, void* recv) {
  if (stream_ != nullptr) return Submit(std::move(request), send, recv).Wait();
  Publish(request);
  StatusOr<BackendMemory::ReadyMark> ready = MarkReady();
  if (!ready.ok()) return Refused(request, ready.status());
  return call_order_->Run(Pending{std::move(request), send, recv, std::move(ready).value(), nullptr});
}

Status RuntimeImpl::RunBaseline(TensorRequest request, void* buffer) {
  if (stream_ != nullptr) return Submit(std::move(request), buffer, buffer).Wait();
  Publish(request);
  StatusOr<BackendMemory::ReadyMark> ready = MarkReady();
  if (!ready.ok()) return Refused(request, ready.status());
  return call_order_->RunAfterQueue(
      Pending{std::move(request), buffer, buffer, std::move(ready).value(), nullptr});
}

Status RuntimeImpl::Bootstrap() {
  KeyValueStore& store = *options_.store;
  // Each Runtime a rank creates gets its own scope, so that a second Runtime over the same store
  // does not see the first one's arrivals. Every rank creates its Runtimes in the same order.
  StatusOr<int64_t> instance = store.Add("runtime/instances/rank" + std::to_string(options_.rank), 1);
  if (!instance.ok()) return Status::Error("rendezvous: " + instance.status().message());
  const std::string scope = "runtime/" + std::to_string(instance.value()) + "/";
  scope_ = scope;
  Status arrived = CheckArrival(store, scope, options_.rank, options_.size, options_.timeout);
  if (!arrived.ok()) return arrived;
  if (Status opened = OpenTimeline(); !opened.ok()) return opened;

  BackendContext context;
  context.rank = options_.rank;
  context.size = options_.size;
  context.local_rank = place_.job_local_rank >= 0 ? place_.job_local_rank : options_.local_rank;
  context.local_size = options_.local_size;
  context.store = options_.store.get();
  context.host_address = options_.host_address;
  context.timeout = options_.timeout;
  context.collective_limit = CollectiveLimitOf(options_.negotiation);
  context.members = place_.members;
  context.group_id = place_.id;
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend(options_.backend, context);
  if (!backend.ok()) return backend.status();
  mpi_threads_multiple_ = backend.value()->mpi_threads_multiple();
  if (stream_ != nullptr && backend.value()->memory().on_device()) {
    StatusOr<std::unique_ptr<Backend>> control = CreateBackend(BackendKind::kGloo, context);
    if (!control.ok()) {
      return Status::Error("the negotiation beside " + std::string(BackendName(options_.backend)) +
                           " runs over gloo: " + control.status().message());
    }
    control_ = std::move(control).value();
  }
  allreduce_path_ = std::string(BackendName(options_.backend));
  StatusOr<bool> hierarchical = AgreeOnHierarchical(options_, store, scope);
  if (!hierarchical.ok()) return hierarchical.status();
  if (SharedMemoryServes(options_) || hierarchical.value()) {
    StatusOr<std::unique_ptr<ShmBackend>> shm =
        WithSharedMemory(std::move(backend).value(), options_, store, scope, hierarchical.value());
    if (!shm.ok()) return shm.status();
    if (hierarchical.value() && stream_ != nullptr) {
      ShmBackend* switchable = shm.value().get();  // owned by backend_ from here on
      stream_->AllowHierarchicalSwitch([switchable](bool on) { switchable->set_hierarchical(on); });
    }
    backend = std::unique_ptr<Backend>(std::move(shm).value());
    allreduce_path_ = hierarchical.value() ? "shm+" + allreduce_path_ : "shm";
  }
  if (stream_ != nullptr) stream_->set_allreduce_path(allreduce_path_);
  backend_ = std::move(backend).value();
  if (options_.elastic.enabled) {  // a lost peer fails collectives with ErrorKind::kRecoverable
    backend_ = std::make_unique<RecoverableBackend>(std::move(backend_));
    if (control_ != nullptr) control_ = std::make_unique<RecoverableBackend>(std::move(control_));
  }
  Watch();
  return Status::Ok();
}

void RuntimeImpl::Watch() {
  WatchdogSettings watchdog;
  watchdog.rank = options_.rank;
  watchdog.warn_after = WatchdogTime(options_.negotiation);
  watchdog.abort_after = CollectiveLimitOf(options_.negotiation);
  watchdog.log = options_.negotiation.warn;
  if (watchdog.warn_after.count() <= 0) return;
  Backend& control = control_ != nullptr ? *control_ : *backend_;
  if (stream_ != nullptr) {
    WatchdogSettings cycles = watchdog;
    cycles.backend = control_ != nullptr ? "gloo" : allreduce_path_;
    cycles.waiting_for =
        " (waiting for every rank's next negotiation cycle: a rank is stopped, or stuck in a collective)";
    watched_control_ = std::make_unique<WatchedBackend>(control, std::move(cycles));
    watched_control_->set_label("the negotiation's cycle");
  }
  watchdog.backend = allreduce_path_;
  watchdog.waiting_for = stream_ != nullptr
                             ? ", after every rank submitted it"
                             : " (in call order: a rank that has not made this call yet, or one "
                               "stuck inside the backend)";
  auto watched = std::make_unique<WatchedBackend>(std::move(backend_), std::move(watchdog));
  watched_ = watched.get();
  backend_ = std::move(watched);
}

Status RuntimeImpl::RunGuarded(const Pending& pending) {
  std::lock_guard<std::mutex> lock(backend_mutex_);
  if (watched_ != nullptr) watched_->set_label("'" + pending.request.name + "'");
  const uint64_t progress = pending.request.progress_sequence;
  progress::PublishPhase(progress, protocol::CollectivePhase::kInBackend);
  Status status = [&]() -> Status {
    try {
      Status ready = backend_->memory().WaitFor(pending.ready);
      if (!ready.ok()) return ready;
      return RunInCallOrder(*backend_, compressed_, options_.rank, options_.size, pending.request,
                            pending.send, pending.recv);
    } catch (const std::exception& e) {
      return Status::Error(std::string(BackendName(options_.backend)) + ": collective failed: " + e.what());
    }
  }();
  progress::PublishPhase(progress,
                         status.ok() ? protocol::CollectivePhase::kDone : protocol::CollectivePhase::kFailed);
  return status;
}

void RuntimeImpl::ThreadMain() {
  Status bootstrapped = PinThread();
  try {
    if (bootstrapped.ok()) bootstrapped = Bootstrap();
  } catch (const std::exception& e) {
    bootstrapped = Status::Error(std::string("bootstrap failed: ") + e.what());
  }
  // In call order the queue refuses every request from then on; it is told before Start returns.
  if (call_order_ != nullptr && !bootstrapped.ok()) call_order_->Break(bootstrapped);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    started_ = true;
    broken_ = bootstrapped;
  }
  changed_.notify_all();

  if (stream_ != nullptr) {
    if (bootstrapped.ok()) {
      Status ended;
      try {
        Backend& control = watched_control_ != nullptr ? *watched_control_
                           : control_ != nullptr       ? *control_
                                                       : *backend_;
        ended = stream_->Run(control, *backend_);
      } catch (const std::exception& e) {
        ended = Status::Error(std::string("negotiation failed: ") + e.what());
      }
      std::lock_guard<std::mutex> lock(mutex_);
      if (broken_.ok()) broken_ = ended;
    }
    watched_control_.reset();
    control_.reset();
    backend_.reset();
    return;
  }

  call_order_->RunQueued();
  backend_.reset();
}

}  // namespace hvdrun
