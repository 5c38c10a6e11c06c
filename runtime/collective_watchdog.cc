#include "runtime/collective_watchdog.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "common/error_text.h"

namespace hvdrun {
namespace {

constexpr std::chrono::milliseconds kLongestNap{1000};

}  // namespace

CollectiveWatchdog::CollectiveWatchdog(WatchdogSettings settings, Backend* backend)
    : settings_(std::move(settings)), backend_(backend) {
  if (settings_.warn_after.count() > 0) thread_ = std::thread([this] { Watch(); });
}

CollectiveWatchdog::~CollectiveWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CollectiveWatchdog::Enter(WatchedCall call) {
  if (!thread_.joinable()) return;
  const Clock::time_point now = Clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  call_ = std::move(call);
  inside_ = true;
  entered_ = now;
  next_warning_ = now + settings_.warn_after;
  abort_requested_ = false;
}

Status CollectiveWatchdog::Exit(Status status) {
  if (!thread_.joinable()) return status;
  std::lock_guard<std::mutex> lock(mutex_);
  inside_ = false;
  // A call that came back OK finished before the backend saw the request.
  if (!abort_requested_ || status.ok()) return status;
  abort_requested_ = false;
  const std::string what = call_.name.empty() ? std::string("a call") : call_.name;
  return Status::Error("watchdog: " + what + " (" + call_.op + ", " + std::to_string(call_.bytes) +
                       " bytes) was still in the " + settings_.backend + " backend on rank " +
                       std::to_string(settings_.rank) + " at the stall shutdown time (" +
                       DurationText(settings_.abort_after) +
                       ", HOROVOD_STALL_SHUTDOWN_TIME_SECONDS) and was aborted" +
                       (status.ok() ? std::string() : ": " + status.message()));
}

std::string CollectiveWatchdog::Describe(Clock::time_point now) const {
  auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - entered_);
  // Whole seconds past the first one, as the stall warnings count.
  if (waited >= std::chrono::seconds(1)) waited = std::chrono::duration_cast<std::chrono::seconds>(waited);
  const std::string what = call_.name.empty() ? std::string("a call") : call_.name;
  std::string line = "watchdog: rank " + std::to_string(settings_.rank) + ": " + what + " (" + call_.op +
                     ", " + std::to_string(call_.bytes) + " bytes) has been in the " + settings_.backend +
                     " backend for " + DurationText(waited) + settings_.waiting_for;
  if (backend_ != nullptr) {
    if (const std::string progress = backend_->Progress(); !progress.empty()) line += "; " + progress;
  }
  line += settings_.abort_after.count() > 0
              ? "; it is aborted at " + DurationText(settings_.abort_after) + " (the stall shutdown time)"
              : "; no stall shutdown time is set (HOROVOD_STALL_SHUTDOWN_TIME_SECONDS), so it waits";
  return line;
}

void CollectiveWatchdog::Watch() {
  const Clock::duration nap = std::min<Clock::duration>(settings_.warn_after / 4, kLongestNap);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_.wait_for(lock, nap, [this] { return stopping_; })) {
    if (!inside_) continue;
    const Clock::time_point now = Clock::now();
    if (now >= next_warning_) {
      next_warning_ = now + settings_.warn_after;
      const std::string line = Describe(now);
      if (settings_.log) {
        settings_.log(line);
      } else {
        std::fprintf(stderr, "libhvdrun: %s\n", line.c_str());
      }
    }
    const bool past_limit = settings_.abort_after.count() > 0 && now - entered_ >= settings_.abort_after;
    if (past_limit && !abort_requested_ && backend_ != nullptr) {
      // Asked once per call; the backend ends the call on the collective thread, and Exit names it.
      abort_requested_ = backend_->RequestAbort();
    }
  }
}

}  // namespace hvdrun
