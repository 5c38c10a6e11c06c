// The timelines of a Runtime's engines (runtime_impl.h, docs/timeline.md): the one RuntimeOptions::timeline
// opens when the engine starts, which hvdrun collects when it ends, and the ones Runtime::StartTimeline
// opens and StopTimeline closes while the job runs. Runtimes of one process that name the same file
// share one Timeline (a --nccl job's two runtimes, a job's process sets), closed by the last to let go.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "common/process/file_descriptor.h"
#include "hvdrun/runtime.h"
#include "runtime/process_set_table.h"
#include "runtime/runtime_impl.h"
#include "runtime/timeline/timeline.h"

namespace hvdrun {
namespace {

// The timelines this process's Runtimes have open, by path.
std::mutex& TimelinesMutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<std::string, std::weak_ptr<Timeline>>& OpenTimelines() {
  static auto* open = new std::map<std::string, std::weak_ptr<Timeline>>();
  return *open;
}

// The Timeline this process has open at options.path, or a new one there (its directory created).
StatusOr<std::shared_ptr<Timeline>> SharedTimeline(TimelineOptions options) {
  std::lock_guard<std::mutex> lock(TimelinesMutex());
  std::weak_ptr<Timeline>& shared = OpenTimelines()[options.path];
  if (std::shared_ptr<Timeline> open = shared.lock(); open != nullptr) return open;
  const std::string path = options.path;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code error;
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  if (error) {
    OpenTimelines().erase(path);
    return Status::Error("cannot create the timeline's directory '" + parent.string() +
                         "': " + error.message());
  }
  StatusOr<std::unique_ptr<Timeline>> opened = Timeline::Open(std::move(options));
  if (!opened.ok()) {
    OpenTimelines().erase(path);
    return opened.status();
  }
  std::shared_ptr<Timeline> timeline(std::move(opened).value());
  shared = timeline;
  return timeline;
}

// Lets go of `timeline` (no engine may record in it any more): closes it when no other Runtime of this
// process holds it, and then says whether it closed well; OK while others still hold it.
Status ReleaseTimeline(std::shared_ptr<Timeline>& timeline, bool* closed) {
  *closed = false;
  std::lock_guard<std::mutex> lock(TimelinesMutex());
  if (timeline.use_count() > 1) {
    timeline.reset();
    return Status::Ok();
  }
  OpenTimelines().erase(timeline->options().path);
  Status status = timeline->Close();
  timeline.reset();
  *closed = true;
  return status;
}

// Sends the closed timeline at `path` to hvdrun through `store`, in pieces well under the rendezvous
// protocol's frame limit, then removes it (and its directory, once empty).
Status SendToLauncher(const std::string& path, int rank, KeyValueStore& store) {
  constexpr size_t kPieceBytes = size_t{8} << 20;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::Error("cannot read timeline '" + path + "': " + std::strerror(errno));
  std::string piece(kPieceBytes, '\0');
  uint64_t offset = 0;
  while (true) {
    const ssize_t n = ::pread(fd.get(), piece.data(), piece.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Error("cannot read timeline '" + path + "': " + std::strerror(errno));
    if (n == 0) break;
    Status sent = store.SendTimelinePiece(rank, offset, piece.substr(0, static_cast<size_t>(n)));
    if (!sent.ok()) return sent;
    offset += static_cast<uint64_t>(n);
  }
  ::unlink(path.c_str());
  // The last rank of the host to finish leaves no directory behind.
  ::rmdir(std::filesystem::path(path).parent_path().c_str());
  return Status::Ok();
}

}  // namespace

Status RuntimeImpl::OpenTimeline() {
  const TimelineSettings& settings = options_.timeline;
  if (settings.path.empty()) return Status::Ok();
  TimelineOptions options;
  options.path = settings.path;
  options.rank = options_.rank;
  options.host = settings.host;
  options.mark_cycles = settings.mark_cycles;
  options.zero = std::chrono::steady_clock::now();
  StatusOr<std::shared_ptr<Timeline>> timeline = SharedTimeline(std::move(options));
  if (!timeline.ok()) return timeline.status();
  timeline_ = std::move(timeline).value();
  if (stream_ != nullptr) stream_->set_timeline(timeline_);
  return Status::Ok();
}

void RuntimeImpl::CloseTimeline() {
  if (Status stopped = StopTimeline(); !stopped.ok()) {
    std::fprintf(stderr, "libhvdrun: timeline: %s\n", stopped.message().c_str());
  }
  if (timeline_ == nullptr) return;
  if (stream_ != nullptr) stream_->set_timeline(nullptr);
  const std::string path = timeline_->options().path;
  bool closed = false;
  Status status = ReleaseTimeline(timeline_, &closed);
  if (status.ok() && closed && options_.timeline.send_to_launcher) {
    status = SendToLauncher(path, options_.rank, *options_.store);
  }
  if (!status.ok()) std::fprintf(stderr, "libhvdrun: timeline: %s\n", status.message().c_str());
}

Status RuntimeImpl::StartTimeline(const std::string& path, bool mark_cycles) {
  if (stream_ == nullptr) {
    return Status::Error(
        "StartTimeline: the timeline records the negotiated engine: initialize the Runtime with "
        "CollectiveOrder::kNegotiated");
  }
  std::lock_guard<std::mutex> lock(started_mutex_);
  if (timeline_ != nullptr || started_timeline_ != nullptr) {
    const std::string& open = (timeline_ != nullptr ? timeline_ : started_timeline_)->options().path;
    return Status::Error("StartTimeline('" + path + "'): this rank already writes a timeline to '" + open +
                         "'" +
                         (timeline_ != nullptr ? " (hvdrun --timeline-filename)" : "; StopTimeline first"));
  }
  TimelineOptions options;
  options.path = path;
  options.rank = options_.rank;
  options.host = options_.timeline.host;
  options.mark_cycles = mark_cycles;
  options.zero = std::chrono::steady_clock::now();
  StatusOr<std::shared_ptr<Timeline>> timeline = SharedTimeline(std::move(options));
  if (!timeline.ok()) return Status::Error("StartTimeline: " + timeline.status().message());
  started_timeline_ = std::move(timeline).value();
  stream_->set_timeline(started_timeline_);
  return Status::Ok();
}

Status RuntimeImpl::StopTimeline() {
  std::lock_guard<std::mutex> lock(started_mutex_);
  if (started_timeline_ == nullptr) return Status::Ok();
  stream_->set_timeline(nullptr);  // returns once no response is being recorded in it
  bool closed = false;
  Status status = ReleaseTimeline(started_timeline_, &closed);
  return status.ok() ? status : Status::Error("StopTimeline: " + status.message());
}

namespace {

// The engines of the sets this rank is in, but the job's own.
std::vector<std::shared_ptr<RuntimeImpl>> SetEngines(const ProcessSetTable& sets) {
  std::vector<std::shared_ptr<RuntimeImpl>> engines;
  for (int id : sets.Ids()) {
    if (id == 0) continue;
    StatusOr<std::shared_ptr<ProcessSet>> set = sets.Find(id);
    if (set.ok() && set.value()->engine != nullptr) engines.push_back(set.value()->engine);
  }
  return engines;
}

}  // namespace

Status Runtime::StartTimeline(const std::string& path, bool mark_cycles) {
  Status status = impl_->StartTimeline(path, mark_cycles);
  if (!status.ok()) return status;
  for (const std::shared_ptr<RuntimeImpl>& engine : SetEngines(*sets_)) {
    status = engine->StartTimeline(path, mark_cycles);
    if (!status.ok()) break;
  }
  if (!status.ok()) (void)StopTimeline();
  return status;
}

Status Runtime::StopTimeline() {
  Status status;
  for (const std::shared_ptr<RuntimeImpl>& engine : SetEngines(*sets_)) {
    if (Status stopped = engine->StopTimeline(); status.ok()) status = stopped;
  }
  if (Status stopped = impl_->StopTimeline(); status.ok()) status = stopped;
  return status;
}

}  // namespace hvdrun
