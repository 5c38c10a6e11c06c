#include "runtime/negotiation/negotiated_stream.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/negotiation/fusion_plan.h"
#include "runtime/negotiation/negotiation_message.h"
#include "runtime/negotiation/run_request.h"

namespace hvdrun {
namespace {

using Clock = std::chrono::steady_clock;

// The status fields of each cycle's allreduce, before the cache slots.
enum StatusField : size_t {
  kAnnounce = 0,  // this rank has announcements: every rank gathers them
  kCensus = 1,    // this rank has a cached request stalled: every rank probes its cached requests
  kStop = 2,      // this rank stops (its Runtime is closing, or it broke)
  kFirstSlot = 3,
};

std::string RankList(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) out += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
  return out;
}

// "60 s", or "1500 ms" for a duration that is not whole seconds.
std::string DurationText(std::chrono::milliseconds duration) {
  return duration.count() % 1000 == 0 ? std::to_string(duration.count() / 1000) + " s"
                                      : std::to_string(duration.count()) + " ms";
}

using States = std::vector<std::shared_ptr<CollectiveHandle::State>>;

// While it lives, the data backend's next wait for queued work tells `states` that their work is
// queued and where it ends (BackendMemory::OnQueued, CollectiveHandle::WaitOnStream). Armed around
// a response's last backend call only: an earlier one's end is not the response's.
class QueuedNotice {
 public:
  QueuedNotice(BackendMemory& memory, States states) : memory_(memory) {
    if (states.empty()) return;
    memory_.OnQueued([states = std::move(states)](const BackendMemory::StreamWaiter& waiter) {
      for (const std::shared_ptr<CollectiveHandle::State>& state : states) {
        if (state != nullptr) state->SetQueued(waiter);
      }
    });
  }
  ~QueuedNotice() { memory_.OnQueued(nullptr); }
  QueuedNotice(const QueuedNotice&) = delete;
  QueuedNotice& operator=(const QueuedNotice&) = delete;

 private:
  BackendMemory& memory_;
};

}  // namespace

NegotiatedStream::NegotiatedStream(const RuntimeOptions& options, CompressedAllreduce* compressed)
    : options_(options),
      compressed_(compressed),
      fusion_threshold_(
          EffectiveFusionThreshold(options.negotiation.fusion_threshold_bytes, options.local_size)),
      cache_(options.negotiation.cache_capacity),
      table_(options.size) {}

bool NegotiatedStream::Cacheable(const TensorRequest& request) {
  // A varied allgather's counts (an alltoall's splits) change from call to call: it is always announced.
  return !request.name.empty() && request.name.front() != '(' &&
         request.kind != CollectiveKind::kAllgatherv && request.kind != CollectiveKind::kAlltoallv;
}

std::string NegotiatedStream::FeedbackName(const Entry& entry) {
  return Cacheable(entry.request) && !entry.stand_in ? entry.request.name : std::string();
}

CollectiveHandle NegotiatedStream::Submit(TensorRequest request, const void* send, void* recv,
                                          BackendMemory::ReadyMark ready) {
  auto state = std::make_shared<CollectiveHandle::State>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_.ok()) return CollectiveHandle::State::Completed(broken_);
    if (stop_requested_) {
      return CollectiveHandle::State::Completed(
          Status::Error("'" + request.name + "': the runtime is closing"));
    }
    if (join_.state != nullptr) {
      return CollectiveHandle::State::Completed(Status::Error(
          "'" + request.name + "': this rank has joined (Join) and submits nothing until Join returns"));
    }
    // A name whose device work is queued may come again: the collective thread takes the new
    // request in only once it has completed the one it runs (Complete).
    auto [holder, added] = names_.emplace(request.name, state);
    if (!added && !holder->second->queued()) {
      return CollectiveHandle::State::Completed(
          Status::Error("'" + request.name +
                        "' is already pending on this rank: a name may be reused only once "
                        "its collective has completed"));
    }
    holder->second = state;
    const Clock::time_point now = Clock::now();
    Entry entry;
    entry.request = std::move(request);
    entry.send = send;
    entry.recv = recv;
    entry.state = state;
    entry.ready = std::move(ready);
    entry.submitted = now;
    entry.next_stall_warning = now + options_.negotiation.stall_warning;
    incoming_.push_back(std::move(entry));
  }
  arrived_.notify_all();
  return CollectiveHandle(std::move(state));
}

StatusOr<ReadinessTable::JoinDone> NegotiatedStream::Join(uint64_t unnamed_calls) {
  auto state = std::make_shared<CollectiveHandle::State>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_.ok()) return broken_;
    if (stop_requested_) return Status::Error("Join: the runtime is closing");
    if (join_.state != nullptr) return Status::Error("Join: this rank is already joining, on another thread");
    join_ = JoinRequest{state, unnamed_calls, {}};
  }
  arrived_.notify_all();
  Status status = CollectiveHandle(state).Wait();
  if (!status.ok()) return status;
  std::lock_guard<std::mutex> lock(mutex_);
  return join_.done;
}

void NegotiatedStream::RequestStop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
  }
  arrived_.notify_all();
}

Status NegotiatedStream::broken() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return broken_;
}

NegotiationCounters NegotiatedStream::counters() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counters_;
}

nlohmann::json NegotiatedStream::ReportJson() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {
      {"negotiation",
       {{"cycles", counters_.cycles},
        {"cache_only_cycles", counters_.cache_only_cycles},
        {"responses", counters_.responses},
        {"tensors", counters_.tensors},
        {"copied_bytes", counters_.copied_bytes},
        {"in_place_bytes", counters_.in_place_bytes},
        {"cache_evictions", counters_.cache_evictions},
        {"fusion_threshold_bytes", fusion_threshold_},
        {"cycle_time_ms", std::chrono::duration<double, std::milli>(options_.negotiation.cycle_time).count()},
        {"cache_capacity", options_.negotiation.cache_capacity}}},
      {"responses", statistics_.ToJson()}};
}

void NegotiatedStream::Warn(const std::string& line) const {
  if (options_.negotiation.warn) {
    options_.negotiation.warn(line);
  } else {
    std::fprintf(stderr, "libhvdrun: %s\n", line.c_str());
  }
}

Status NegotiatedStream::Run(Backend& control, Backend& data) {
  // The anchor is when the ranks last agreed less the quickest agreement seen (a cycle's start on
  // the last rank to arrive), the same on every rank: timed from each rank's own start, ranks drift
  // out of phase, and a rank that starts its cycle before its caller resubmits wastes the others'
  // cycle; timed from the agreement alone, every cycle is longer by one allreduce.
  const Clock::duration busy_interval = options_.negotiation.cycle_time;
  const Clock::duration idle_interval = std::max<Clock::duration>(busy_interval, kIdleCycleTime);
  Clock::time_point anchor = Clock::now() - busy_interval;
  while (true) {
    {
      // A rank with nothing pending cycles at the idle interval, so waiting costs next to nothing
      // (each cycle is an allreduce, which over TCP wakes several threads); a submission or a stop
      // request brings its next cycle forward to the busy one.
      std::unique_lock<std::mutex> lock(mutex_);
      while (true) {
        // A joined rank stands in for the others' allreduces: it keeps their pace.
        const bool busy =
            !incoming_.empty() || !pending_.empty() || stop_requested_ || join_.state != nullptr;
        const Clock::time_point next = anchor + (busy ? busy_interval : idle_interval);
        if (Clock::now() >= next) break;
        arrived_.wait_until(lock, next);
      }
    }
    bool go_on = false;
    try {
      go_on = Cycle(control, data);
    } catch (const std::exception& e) {
      FailEverything(
          Status::Error(std::string(BackendName(options_.backend)) + ": negotiation failed: " + e.what()));
    }
    if (!go_on) break;
    anchor = agreed_at_ - quickest_agreement_;
  }
  return broken();
}

bool NegotiatedStream::Cycle(Backend& control, Backend& data) {
  const Clock::time_point now = Clock::now();
  const Intake intake = TakeSubmissions();
  if (timeline_ != nullptr && !pending_.empty()) timeline_->MarkCycle(now);

  Ballot ballot = MakeBallot(now, intake);
  if (!Agree(control, now, ballot)) return false;
  if (ballot.fields.Count(kStop) > 0) {
    if (!ballot.timed_out.ok()) {
      FailEverything(ballot.timed_out);
    } else if (!intake.stopping) {
      FailEverything(
          Status::Error("another rank's runtime stopped (closed, timed out or failed) while this "
                        "rank had collectives pending"));
    }
    return false;
  }

  std::vector<TensorRequest> ready = ReadyInCache(ballot.fields);
  const bool gathered = ballot.fields.Count(kAnnounce) > 0 || ballot.fields.Count(kCensus) > 0;
  std::optional<ReadinessTable::JoinDone> join_done;
  if (gathered && !GatherAnnouncements(control, now, ballot, &ready, &join_done)) return false;

  if (options_.rank == 0 && options_.negotiation.stall_check) WarnOfStalls(now, ready);
  Status status = table_.joined(options_.rank) ? AddStandIns(data.memory(), ready) : Status::Ok();
  if (status.ok()) status = Execute(data, ready, Clock::now());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!ready.empty() || gathered) {
      ++counters_.cycles;
      if (!gathered) ++counters_.cache_only_cycles;
    }
    counters_.cache_evictions = cache_.evictions();
  }
  if (!status.ok()) {
    FailEverything(status);
    return false;
  }
  if (join_done) CompleteJoin(*join_done);
  return true;
}

NegotiatedStream::Intake NegotiatedStream::TakeSubmissions() {
  Intake intake;
  std::lock_guard<std::mutex> lock(mutex_);
  for (Entry& entry : incoming_) pending_.Add(std::move(entry));
  incoming_.clear();
  intake.stopping = stop_requested_ && pending_.empty();
  if (join_.state != nullptr) intake.joining = join_.unnamed_calls;
  return intake;
}

NegotiatedStream::Ballot NegotiatedStream::MakeBallot(Clock::time_point now, const Intake& intake) {
  Ballot ballot(CountedFields(kFirstSlot + cache_.bit_count(), options_.size));
  for (auto& [order, entry] : pending_.InOrder()) {
    const std::string& name = entry.request.name;
    const std::chrono::milliseconds shutdown = options_.negotiation.stall_shutdown;
    if (options_.negotiation.stall_check && shutdown.count() > 0 && now - entry.submitted >= shutdown &&
        ballot.timed_out.ok()) {
      ballot.timed_out = Status::Error(
          "stall: '" + name + "' was not submitted by every rank within the stall " + "shutdown time (" +
          DurationText(shutdown) + ", HOROVOD_STALL_SHUTDOWN_TIME_SECONDS); the collective fails");
    }
    if (entry.announced) continue;
    uint32_t bit = 0;
    const ResponseCache::Lookup lookup =
        Cacheable(entry.request) ? cache_.Find(entry.request, &bit) : ResponseCache::Lookup::kMiss;
    // While a rank has joined, a cached broadcast goes through the readiness table, which fails it.
    const bool joined_ranks_refuse =
        table_.joined_count() > 0 && entry.request.kind != CollectiveKind::kAllreduce;
    if (lookup == ResponseCache::Lookup::kHit && !joined_ranks_refuse) {
      ballot.fields.Set(kFirstSlot + bit);
      ballot.cached.push_back(&entry);
      if (options_.negotiation.stall_check && now >= entry.next_stall_warning) {
        ballot.census = true;
        entry.next_stall_warning = now + options_.negotiation.stall_warning;
      }
      continue;
    }
    if (lookup == ResponseCache::Lookup::kMismatch) {
      ballot.mine.push_back(Announcement{Announcement::Kind::kInvalidate, entry.request});
      continue;  // announced afresh once every rank has erased the entry
    }
    ballot.mine.push_back(Announcement{Announcement::Kind::kRequest, entry.request});
    entry.announced = true;
  }
  // A rank joins once what it submitted before has completed.
  if (intake.joining && !join_announced_ && pending_.empty()) {
    TensorRequest join;
    join.count = *intake.joining;
    ballot.mine.push_back(Announcement{Announcement::Kind::kJoin, join});
    join_announced_ = true;
  }
  // A joined rank has every cached allreduce pending (as zeros), as Horovod's joined ranks do.
  if (table_.joined(options_.rank)) {
    for (uint32_t bit = 0; bit < cache_.bit_count(); ++bit) {
      if (cache_.InUse(bit) && cache_.At(bit).kind == CollectiveKind::kAllreduce) {
        ballot.fields.Set(kFirstSlot + bit);
      }
    }
  }
  if (!ballot.mine.empty()) ballot.fields.Set(kAnnounce);
  if (ballot.census) ballot.fields.Set(kCensus);
  if (intake.stopping || !ballot.timed_out.ok()) ballot.fields.Set(kStop);
  return ballot;
}

bool NegotiatedStream::Agree(Backend& backend, Clock::time_point now, Ballot& ballot) {
  std::vector<int64_t>& words = ballot.fields.words();
  const Status status =
      backend.Allreduce(words.data(), words.data(), words.size(), DataType::kInt64, ReduceOp::kSum);
  agreed_at_ = Clock::now();
  // The quickest agreement drifts up slowly, so that one lucky cycle does not count for ever.
  const Clock::duration took = agreed_at_ - now;
  quickest_agreement_ =
      took < quickest_agreement_ ? took : quickest_agreement_ + (took - quickest_agreement_) / 64;
  if (!status.ok()) {
    FailEverything(status);
    return false;
  }
  return true;
}

std::vector<TensorRequest> NegotiatedStream::ReadyInCache(const CountedFields& fields) const {
  std::vector<TensorRequest> ready;
  for (size_t bit = 0; bit < cache_.bit_count(); ++bit) {
    if (fields.Count(kFirstSlot + bit) == options_.size) {
      ready.push_back(cache_.At(static_cast<uint32_t>(bit)));
    }
  }
  return ready;
}

bool NegotiatedStream::GatherAnnouncements(Backend& backend, Clock::time_point now, Ballot& ballot,
                                           std::vector<TensorRequest>* ready,
                                           std::optional<ReadinessTable::JoinDone>* join_done) {
  // In a census, each cached request that some rank lacks is probed, so that rank 0 can name it.
  if (ballot.fields.Count(kCensus) > 0) {
    for (const Entry* entry : ballot.cached) {
      uint32_t bit = 0;
      cache_.Find(entry->request, &bit);
      if (ballot.fields.Count(kFirstSlot + bit) < options_.size) {
        ballot.mine.push_back(Announcement{Announcement::Kind::kProbe, entry->request});
      }
    }
  }
  std::vector<std::vector<Announcement>> by_rank;
  const Status status = Gather(backend, ballot.mine, &by_rank);
  if (!status.ok()) {
    FailEverything(status);
    return false;
  }
  ReadinessTable::Outcome outcome = table_.Apply(by_rank, now);
  for (const std::string& name : outcome.invalidated) {
    uint32_t bit = 0;
    TensorRequest probe;
    probe.name = name;
    if (cache_.Find(probe, &bit) != ResponseCache::Lookup::kMiss) cache_.Erase(bit);
  }
  for (const ReadinessTable::Failure& failure : outcome.failed) {
    if (pending_.Contains(failure.name)) Complete(failure.name, Status::Error(failure.error));
  }
  ready->insert(ready->end(), outcome.ready.begin(), outcome.ready.end());
  *join_done = outcome.joined;
  return true;
}

void NegotiatedStream::CompleteJoin(const ReadinessTable::JoinDone& done) {
  join_announced_ = false;
  std::shared_ptr<CollectiveHandle::State> state;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    join_.done = done;
    state = std::move(join_.state);  // Submit and Join are open again
  }
  if (state != nullptr) state->Complete(Status::Ok());
}

Status NegotiatedStream::AddStandIns(BackendMemory& memory, const std::vector<TensorRequest>& ready) {
  for (const TensorRequest& request : ready) {
    if (request.kind != CollectiveKind::kAllreduce || pending_.Contains(request.name)) continue;
    Entry entry;
    entry.request = request;
    entry.stand_in = true;
    StatusOr<BackendMemory::Buffer> zeros = memory.Allocate(request.bytes());
    Status status = zeros.ok() ? memory.Zero(zeros.value().get(), request.bytes()) : zeros.status();
    if (!status.ok()) return status;
    entry.zeros = std::move(zeros).value();
    entry.send = entry.recv = entry.zeros.get();
    entry.state = std::make_shared<CollectiveHandle::State>();
    entry.submitted = entry.next_stall_warning = Clock::now();
    pending_.Add(std::move(entry));
  }
  return Status::Ok();
}

void NegotiatedStream::WarnOfStalls(std::chrono::steady_clock::time_point now,
                                    const std::vector<TensorRequest>& ready) {
  std::unordered_map<std::string, Clock::time_point> still_stalled;
  for (const ReadinessTable::Waiting& waiting : table_.Stalled(now, options_.negotiation.stall_warning)) {
    const bool runs_now = std::any_of(ready.begin(), ready.end(), [&](const TensorRequest& request) {
      return request.name == waiting.name;
    });
    if (waiting.missing.empty() || runs_now) continue;
    auto warned = next_stall_warning_.find(waiting.name);
    if (warned != next_stall_warning_.end() && now < warned->second) {
      still_stalled.insert(*warned);
      continue;
    }
    const std::chrono::milliseconds shutdown = options_.negotiation.stall_shutdown;
    Warn("stall: '" + waiting.name + "' was submitted by " + RankList(waiting.submitted) + " and waits for " +
         RankList(waiting.missing) +
         (shutdown.count() > 0
              ? "; it fails after " + DurationText(shutdown) + " (the stall shutdown time)"
              : "; no stall shutdown time is set (HOROVOD_STALL_SHUTDOWN_TIME_SECONDS), so it waits"));
    still_stalled[waiting.name] = now + options_.negotiation.stall_warning;
  }
  next_stall_warning_ = std::move(still_stalled);
  table_.ForgetProbes();
}

Status NegotiatedStream::Gather(Backend& backend, const std::vector<Announcement>& mine,
                                std::vector<std::vector<Announcement>>* by_rank) {
  const std::string bytes = EncodeAnnouncements(mine);
  const auto size = static_cast<size_t>(options_.size);
  int64_t length = static_cast<int64_t>(bytes.size());
  std::vector<int64_t> lengths(size);
  Status status = backend.Allgather(&length, lengths.data(), 1, DataType::kInt64);
  if (!status.ok()) return status;
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  const size_t words = (static_cast<size_t>(longest) + sizeof(int64_t) - 1) / sizeof(int64_t);
  std::vector<int64_t> send(words, 0);
  std::vector<int64_t> recv(words * size, 0);
  if (!bytes.empty()) std::memcpy(send.data(), bytes.data(), bytes.size());
  if (words > 0) {
    status = backend.Allgather(send.data(), recv.data(), words, DataType::kInt64);
    if (!status.ok()) return status;
  }
  by_rank->clear();
  for (size_t rank = 0; rank < size; ++rank) {
    if (lengths[rank] < 0 || lengths[rank] > longest) {
      return Status::Error("negotiation: rank " + std::to_string(rank) + " announced a length of " +
                           std::to_string(lengths[rank]) + " bytes");
    }
    const std::string_view view(reinterpret_cast<const char*>(recv.data() + rank * words),
                                static_cast<size_t>(lengths[rank]));
    StatusOr<std::vector<Announcement>> decoded = DecodeAnnouncements(view);
    if (!decoded.ok()) {
      return Status::Error("rank " + std::to_string(rank) + ": " + decoded.status().message());
    }
    by_rank->push_back(std::move(decoded).value());
  }
  return Status::Ok();
}

Status NegotiatedStream::Execute(Backend& data, const std::vector<TensorRequest>& ready,
                                 Clock::time_point agreed) {
  // Every rank has each ready name pending (it announced it, or set its cache slot).
  std::vector<TensorRequest> allreduces;
  for (size_t i = 0; i < ready.size(); ++i) {
    const TensorRequest& request = ready[i];
    if (request.kind == CollectiveKind::kAllreduce) {
      allreduces.push_back(request);
      continue;
    }
    ResponseTimes times;
    times.start = times.copied_in = Clock::now();
    Entry& entry = pending_.At(request.name);
    entry.request.counts = request.counts;  // kAllgatherv: every rank's, as the ranks agreed
    Status status = RunAlone(data, entry);
    times.reduced = times.end = Clock::now();
    times.device = data.last_device_time();
    if (status.ok()) RecordResponse(ready, {i}, agreed, times);
    Complete(request.name, status);
    if (!status.ok()) return status;
  }
  for (const FusedResponse& response : PlanFusion(allreduces, fusion_threshold_)) {
    ResponseTimes times;
    times.start = times.copied_in = Clock::now();
    Status status;
    if (response.members.size() == 1) {
      status = RunAlone(data, pending_.At(allreduces[response.members.front()].name));
      times.reduced = times.end = Clock::now();
      times.device = data.last_device_time();
    } else {
      status = RunFused(data, allreduces, response.members, response.offsets, response.bytes, &times);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++counters_.responses;
      counters_.tensors += response.members.size();
      uint64_t bytes = 0;
      for (size_t member : response.members) bytes += allreduces[member].bytes();
      statistics_.Record(bytes, response.members.size(), times.end - times.start);
      if (response.members.size() > 1) {
        (times.copied ? counters_.copied_bytes : counters_.in_place_bytes) += response.bytes;
      }
    }
    if (status.ok()) RecordResponse(allreduces, response.members, agreed, times);
    for (size_t member : response.members) Complete(allreduces[member].name, status);
    if (!status.ok()) return status;
  }
  // The cache learns the ready requests in the order every rank saw them.
  for (const TensorRequest& request : ready) {
    if (Cacheable(request)) cache_.Put(request);
  }
  return Status::Ok();
}

void NegotiatedStream::RecordResponse(const std::vector<TensorRequest>& requests,
                                      const std::vector<size_t>& members, Clock::time_point agreed,
                                      const ResponseTimes& times) {
  if (timeline_ == nullptr) return;
  // By CollectiveKind's value.
  static constexpr const char* kOperations[] = {"ALLREDUCE",          "BROADCAST", "ALLGATHER", "BARRIER",
                                                "BASELINE_ALLREDUCE", "ALLGATHER", "ALLTOALL",  "ALLTOALL"};
  static_assert(
      sizeof(kOperations) / sizeof(kOperations[0]) == static_cast<size_t>(CollectiveKind::kAlltoall) + 1,
      "an operation for every CollectiveKind");
  const std::string operation = kOperations[static_cast<size_t>(requests[members.front()].kind)];
  const std::string negotiate = "NEGOTIATE_" + operation;
  // fp8's values travel by the backend's alltoall and allgather, not by what carries allreduces.
  const TensorRequest& first = requests[members.front()];
  const bool fp8 = CompressedAllreduce::Compresses(first.type, first.op, first.compression) &&
                   (first.compression == CompressionFormat::kFloat8E4M3 ||
                    first.compression == CompressionFormat::kFloat8E5M2);
  const bool through_path = first.kind == CollectiveKind::kAllreduce && !fp8 && !allreduce_path_.empty();
  const std::string backend_call = TimelineBackendActivity(
      through_path ? allreduce_path_ : std::string(BackendName(options_.backend)), operation);

  TimelineResponse response;
  response.operation = operation;
  response.tensor_count = members.size();
  Clock::time_point submitted = agreed;
  for (size_t member : members) {
    const TensorRequest& request = requests[member];
    response.bytes += request.bytes();
    if (response.tensor_names.size() < Timeline::kMaxTensorNames) {
      response.tensor_names.push_back(request.name);
    }
    if (pending_.Contains(request.name)) submitted = std::min(submitted, pending_.At(request.name).submitted);
  }
  response.activities.push_back({negotiate, submitted, agreed});
  response.activities.push_back({kTimelineQueue, agreed, times.start});
  if (times.copied) response.activities.push_back({kTimelineMemcpyIn, times.start, times.copied_in});
  const Clock::time_point call_start =
      times.device ? std::max(times.copied_in,
                              times.reduced - std::chrono::duration_cast<Clock::duration>(*times.device))
                   : times.copied_in;
  response.activities.push_back({backend_call, call_start, times.reduced});
  if (times.copied) response.activities.push_back({kTimelineMemcpyOut, times.reduced, times.end});
  timeline_->Record(response);
}

Status NegotiatedStream::RunAlone(Backend& data, Entry& entry) {
  Status status = data.memory().WaitFor(entry.ready);
  if (!status.ok()) return status;
  const QueuedNotice notice(data.memory(), RunsAsOneCall(entry.request) ? States{entry.state} : States{});
  return RunRequest(data, *compressed_, entry.request, entry.send, entry.recv, options_.rank,
                    FeedbackName(entry));
}

Status NegotiatedStream::WaitForMembers(BackendMemory& memory, const std::vector<TensorRequest>& ready,
                                        const std::vector<size_t>& members) {
  for (size_t member : members) {
    Status status = memory.WaitFor(pending_.At(ready[member].name).ready);
    if (!status.ok()) return status;
  }
  return Status::Ok();
}

Status NegotiatedStream::RunFused(Backend& data, const std::vector<TensorRequest>& ready_requests,
                                  const std::vector<size_t>& members, const std::vector<size_t>& offsets,
                                  size_t bytes, ResponseTimes* times) {
  const TensorRequest& first = ready_requests[members.front()];
  // Members that already lie back to back in memory, in packing order, with no gap between them
  // (a gap may be someone else's memory) and in place, are reduced where they are (as PyTorch DDP's
  // gradient_as_bucket_view): no copy in or out. The fusion buffer's alignment does not apply.
  auto* base = static_cast<std::byte*>(pending_.At(first.name).recv);
  bool in_place = true;
  size_t end = 0;
  // Each member must also fill its place in the plan exactly (a multiple of the alignment), so that
  // every rank reduces the same layout whether its tensors are in place or copied (a joined rank's
  // zeros are always copied).
  for (size_t i = 0; i < members.size() && in_place; ++i) {
    const Entry& entry = pending_.At(ready_requests[members[i]].name);
    const size_t place = (i + 1 < members.size() ? offsets[i + 1] : bytes) - offsets[i];
    in_place = entry.send == entry.recv && entry.recv == base + end && offsets[i] == end &&
               entry.request.bytes() == place;
    end += entry.request.bytes();
  }
  const size_t element = DataTypeSize(first.type);
  std::vector<TensorSpan> tensors;  // for compression's error feedback, which keys on callers' names
  if (CompressedAllreduce::Compresses(first.type, first.op, first.compression)) {
    size_t next = 0;
    for (size_t i = 0; i < members.size(); ++i) {
      const TensorRequest& member = ready_requests[members[i]];
      tensors.push_back({FeedbackName(pending_.At(member.name)),
                         in_place ? next / element : offsets[i] / element, member.count});
      next += member.bytes();
    }
  }
  BackendMemory& memory = data.memory();
  if (Status ready = WaitForMembers(memory, ready_requests, members); !ready.ok()) return ready;
  States states;
  if (!CompressedAllreduce::Compresses(first.type, first.op, first.compression)) {
    for (size_t member : members) states.push_back(pending_.At(ready_requests[member].name).state);
  }
  if (in_place) {
    const QueuedNotice notice(memory, std::move(states));
    Status status = compressed_->Allreduce(data, base, base, end / element, first.type, first.op,
                                           first.compression, tensors);
    times->reduced = times->end = Clock::now();
    times->device = data.last_device_time();
    return status;
  }

  if (fusion_buffer_bytes_ < bytes) {
    StatusOr<BackendMemory::Buffer> grown = memory.Allocate(bytes);
    if (!grown.ok()) return grown.status();
    fusion_buffer_ = std::move(grown).value();
    fusion_buffer_bytes_ = bytes;
  }
  std::byte* const fused = fusion_buffer_.get();
  // The gaps between members (aligned offsets) are reduced too: zeroed, so that what an earlier
  // response left there cannot set a compressed block's scale (fp8) or overflow a sum.
  std::vector<BackendMemory::Copy> copies;
  size_t filled = 0;
  Status status;
  for (size_t i = 0; i < members.size() && status.ok(); ++i) {
    const Entry& entry = pending_.At(ready_requests[members[i]].name);
    if (offsets[i] > filled) status = memory.Zero(fused + filled, offsets[i] - filled);
    if (entry.request.bytes() > 0) copies.push_back({fused + offsets[i], entry.send, entry.request.bytes()});
    filled = offsets[i] + entry.request.bytes();
  }
  if (status.ok() && bytes > filled) status = memory.Zero(fused + filled, bytes - filled);
  if (status.ok()) status = memory.CopyAll(copies);
  if (!status.ok()) return status;
  times->copied = true;
  times->copied_in = Clock::now();
  status = compressed_->Allreduce(data, fused, fused, bytes / element, first.type, first.op,
                                  first.compression, tensors);
  times->reduced = times->end = Clock::now();
  times->device = data.last_device_time();
  if (!status.ok()) return status;
  copies.clear();
  for (size_t i = 0; i < members.size(); ++i) {
    const Entry& entry = pending_.At(ready_requests[members[i]].name);
    if (entry.request.bytes() > 0) copies.push_back({entry.recv, fused + offsets[i], entry.request.bytes()});
  }
  status = memory.CopyAll(copies);
  if (status.ok()) {
    const QueuedNotice notice(memory, std::move(states));
    status = memory.Flush();
  }
  times->end = Clock::now();
  return status;
}

void NegotiatedStream::Complete(const std::string& name, const Status& status) {
  std::optional<Entry> entry = pending_.Take(name);
  if (!entry) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Unless the name was submitted again meanwhile (Submit: its work was queued).
    auto holder = names_.find(name);
    if (holder != names_.end() && holder->second == entry->state) names_.erase(holder);
  }
  entry->state->Complete(status);
}

void NegotiatedStream::FailEverything(const Status& status) {
  std::deque<Entry> incoming;
  std::shared_ptr<CollectiveHandle::State> join;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (broken_.ok()) broken_ = status;
    incoming.swap(incoming_);
    names_.clear();
    join = std::move(join_.state);
  }
  if (join != nullptr) join->Complete(broken());
  for (auto& [order, entry] : pending_.InOrder()) entry.state->Complete(broken());
  pending_.clear();
  for (Entry& entry : incoming) entry.state->Complete(broken());
}

void NegotiatedStream::PendingEntries::Add(Entry entry) {
  order_of_[entry.request.name] = next_;
  by_order_.emplace(next_++, std::move(entry));
}

std::optional<NegotiatedStream::Entry> NegotiatedStream::PendingEntries::Take(const std::string& name) {
  auto found = order_of_.find(name);
  if (found == order_of_.end()) return std::nullopt;
  auto node = by_order_.extract(found->second);
  order_of_.erase(found);
  return std::move(node.mapped());
}

void NegotiatedStream::PendingEntries::clear() {
  by_order_.clear();
  order_of_.clear();
}

}  // namespace hvdrun
