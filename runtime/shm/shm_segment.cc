#include "runtime/shm/shm_segment.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstddef>
#include <ctime>
#include <utility>

#include "runtime/shm/shm_bootstrap.h"
#include "runtime/shm/shm_layout.h"

namespace hvdrun {
namespace {

using Clock = std::chrono::steady_clock;
using shm_layout::kFailed;
using shm_layout::kGone;
using shm_layout::kPageBytes;
using shm_layout::kRunning;
using shm_layout::Line;
using shm_layout::RankLine;

constexpr int kNoPidfd = -2;  // a process whose pidfd could not be opened: checked with kill(pid, 0)

// Sleeps while *word == expected, for up to `timeout`; a wake, a signal or the timeout ends it.
void FutexWait(std::atomic<uint32_t>* word, uint32_t expected, std::chrono::nanoseconds timeout) {
  timespec relative{};
  relative.tv_sec = static_cast<time_t>(timeout.count() / 1000000000);
  relative.tv_nsec = static_cast<decltype(relative.tv_nsec)>(timeout.count() % 1000000000);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &relative, nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

size_t ShmSegment::SlotBytesFor(int local_size) {
  constexpr size_t kMinSlotBytes = size_t{256} << 10;
  const size_t share = kSlotBudgetBytes / (2 * static_cast<size_t>(std::max(local_size, 1)));
  return std::max(kMinSlotBytes, share / kPageBytes * kPageBytes);
}

StatusOr<std::unique_ptr<ShmSegment>> ShmSegment::Open(KeyValueStore& store, const ShmGroup& group,
                                                       size_t slot_bytes) {
  const int n = group.local_size;
  const int me = group.local_rank;
  if (n < 1 || n > kMaxLocalRanks || me < 0 || me >= n || slot_bytes == 0 || slot_bytes % 64 != 0) {
    return Status::Error("shared memory: bad group (local rank " + std::to_string(me) + " of " +
                         std::to_string(n) + ", slot of " + std::to_string(slot_bytes) + " bytes)");
  }
  std::string description;
  std::string error;
  // Each rank writes its line once it has mapped the segment; every rank reads the lines
  // (OpenPidfds) only after all of them agreed that they have.
  void* base = me == 0 ? CreateAndHandOverSegment(store, group, slot_bytes, &description, &error)
                       : ReceiveSegment(store, group, slot_bytes, &description, &error);
  if (base != nullptr) {
    RankLine& line = Line(base, me);
    line.pid.store(static_cast<int32_t>(::getpid()), std::memory_order_relaxed);
    line.rank.store(group.rank, std::memory_order_relaxed);
  }
  // All local ranks succeed or fail together.
  const std::string failure = AgreeOnSegmentOutcome(store, group, base != nullptr ? "" : error);
  const size_t bytes = shm_layout::SegmentBytes(n, slot_bytes);
  if (!failure.empty()) {
    if (base != nullptr) ::munmap(base, bytes);
    return Status::Error("shared memory: " + failure + " (HVDRUN_SHM=0 turns the shared-memory path off)");
  }
  std::unique_ptr<ShmSegment> segment(new ShmSegment(group, description, base, bytes, slot_bytes));
  if (Status pidfds = segment->OpenPidfds(); !pidfds.ok()) return pidfds;
  return segment;
}

ShmSegment::ShmSegment(ShmGroup group, std::string description, void* base, size_t bytes, size_t slot_bytes)
    : group_(std::move(group)),
      description_(std::move(description)),
      base_(base),
      bytes_(bytes),
      slot_bytes_(slot_bytes) {}

ShmSegment::~ShmSegment() {
  RankLine& line = Line(base_, group_.local_rank);
  uint32_t running = kRunning;
  line.state.compare_exchange_strong(running, kGone, std::memory_order_acq_rel);
  header().bell.fetch_add(1, std::memory_order_seq_cst);
  FutexWakeAll(&header().bell);
  for (int fd : pidfds_) {
    if (fd >= 0) ::close(fd);
  }
  ::munmap(base_, bytes_);
}

shm_layout::Header& ShmSegment::header() const { return shm_layout::HeaderOf(base_); }

std::byte* ShmSegment::slot(int set, int local_rank) const {
  const size_t index =
      static_cast<size_t>(set) * static_cast<size_t>(group_.local_size) + static_cast<size_t>(local_rank);
  return static_cast<std::byte*>(base_) + shm_layout::DataOffset(group_.local_size) + index * slot_bytes_;
}

Status ShmSegment::OpenPidfds() {
  const pid_t self = ::getpid();
  for (int local = 0; local < group_.local_size; ++local) {
    const pid_t pid = Line(base_, local).pid.load(std::memory_order_acquire);
    if (pid == self) {
      pidfds_.push_back(-1);
      continue;
    }
    const int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    if (fd >= 0) {
      ::fcntl(fd, F_SETFD, FD_CLOEXEC);
      pidfds_.push_back(fd);
    } else if (errno == ESRCH) {
      return Status::Error("shared memory: " + Describe(local) + " died while the segment was set up");
    } else {
      pidfds_.push_back(kNoPidfd);  // a kernel before 5.3: kill(pid, 0) instead
    }
  }
  return Status::Ok();
}

std::string ShmSegment::Describe(int local) const {
  const RankLine& line = Line(base_, local);
  return "rank " + std::to_string(line.rank.load()) + " (local rank " + std::to_string(local) + ", pid " +
         std::to_string(line.pid.load()) + ")";
}

Status ShmSegment::CheckPeer(int local, const char* what) const {
  const RankLine& line = Line(base_, local);
  const std::string who = Describe(local);
  const uint32_t state = line.state.load(std::memory_order_acquire);
  if (state == kFailed) return Status::Error("shared memory: " + who + " failed during " + what);
  if (state == kGone) return Status::Error("shared memory: " + who + " ended its runtime during " + what);
  const int fd = pidfds_[static_cast<size_t>(local)];
  bool dead = false;
  if (fd >= 0) {
    pollfd exited{fd, POLLIN, 0};
    dead = ::poll(&exited, 1, 0) > 0;
  } else if (fd == kNoPidfd) {
    dead = ::kill(line.pid.load(), 0) != 0 && errno == ESRCH;
  }
  if (dead) return Status::Error("shared memory: " + who + " died during " + what);
  return Status::Ok();
}

Status ShmSegment::Barrier(const char* what) {
  if (!broken_.ok()) return broken_;
  shm_layout::Header& head = header();
  const int n = group_.local_size;
  const uint32_t target = ++barriers_;
  Line(base_, group_.local_rank).arrived.store(target, std::memory_order_release);
  head.bell.fetch_add(1, std::memory_order_seq_cst);
  if (head.sleepers.load(std::memory_order_seq_cst) != 0) FutexWakeAll(&head.bell);

  int missing = 0;  // the lowest local rank not known to have arrived
  const auto all_arrived = [&] {
    for (; missing < n; ++missing) {
      const uint32_t arrived = Line(base_, missing).arrived.load(std::memory_order_acquire);
      if (static_cast<int32_t>(arrived - target) < 0) return false;
    }
    return true;
  };
  // A short spin first: a peer a few microseconds behind costs no sleep and no wake-up.
  constexpr int kSpins = 4096;
  for (int spin = 0; spin < kSpins; ++spin) {
    if (all_arrived()) return Status::Ok();
    CpuRelax();
  }
  // Missing() names the ranks this wait is for until it returns.
  waiting_at_.store(target, std::memory_order_release);
  struct Waiting {
    std::atomic<uint32_t>& at;
    ~Waiting() { at.store(0, std::memory_order_release); }
  } waiting{waiting_at_};
  const bool limited = group_.barrier_limit.count() > 0;
  const Clock::time_point deadline = Clock::now() + group_.barrier_limit;
  while (true) {
    const uint32_t bell = head.bell.load(std::memory_order_seq_cst);
    if (all_arrived()) return Status::Ok();
    head.sleepers.fetch_add(1, std::memory_order_seq_cst);
    FutexWait(&head.bell, bell, kLivenessInterval);
    head.sleepers.fetch_sub(1, std::memory_order_seq_cst);
    if (all_arrived()) return Status::Ok();
    for (int local = missing; local < n; ++local) {
      const uint32_t arrived = Line(base_, local).arrived.load(std::memory_order_acquire);
      if (static_cast<int32_t>(arrived - target) >= 0) continue;
      if (Status peer = CheckPeer(local, what); !peer.ok()) {
        broken_ = peer;
        return peer;
      }
    }
    if (limited && Clock::now() >= deadline) {
      std::string late;
      for (int local = missing; local < n; ++local) {
        const uint32_t arrived = Line(base_, local).arrived.load(std::memory_order_acquire);
        if (static_cast<int32_t>(arrived - target) >= 0) continue;
        late += (late.empty() ? "" : ", ") + std::to_string(Line(base_, local).rank.load());
      }
      broken_ = Status::Error("shared memory: " + std::string(what) + ": rank(s) " + late +
                              " did not arrive within the stall shutdown time (" +
                              std::to_string(group_.barrier_limit.count()) +
                              " ms, HOROVOD_STALL_SHUTDOWN_TIME_SECONDS)");
      return broken_;
    }
  }
}

std::string ShmSegment::Missing() const {
  const uint32_t target = waiting_at_.load(std::memory_order_acquire);
  if (target == 0) return {};
  std::string missing;
  for (int local = 0; local < group_.local_size; ++local) {
    const uint32_t arrived = Line(base_, local).arrived.load(std::memory_order_acquire);
    if (static_cast<int32_t>(arrived - target) >= 0) continue;
    missing += (missing.empty() ? "waiting for " : ", ") + Describe(local);
  }
  return missing;
}

void ShmSegment::Fail() {
  Line(base_, group_.local_rank).state.store(kFailed, std::memory_order_release);
  header().bell.fetch_add(1, std::memory_order_seq_cst);
  FutexWakeAll(&header().bell);
}

}  // namespace hvdrun
