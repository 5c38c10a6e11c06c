#include "runtime/shm/shm_segment.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <new>
#include <system_error>
#include <utility>

namespace hvdrun {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kMagic = 0x68766472756e5348;  // "hvdrunSH"
constexpr size_t kLineBytes = 64;
constexpr size_t kLinesOffset = 128;
constexpr size_t kPageBytes = 4096;
constexpr int kNoPidfd = -2;  // a process whose pidfd could not be opened: checked with kill(pid, 0)

enum RankState : uint32_t { kRunning = 0, kGone = 1, kFailed = 2 };

// One local rank's cache line.
struct RankLine {
  std::atomic<uint32_t> arrived;  // barriers this rank has arrived at
  std::atomic<uint32_t> state;    // RankState
  std::atomic<int32_t> pid;
  std::atomic<int32_t> rank;  // in the job
};
static_assert(sizeof(RankLine) <= kLineBytes);
static_assert(std::atomic<uint32_t>::is_always_lock_free && sizeof(std::atomic<uint32_t>) == sizeof(uint32_t),
              "futexes need plain 32-bit words");

size_t RoundUp(size_t value, size_t unit) { return (value + unit - 1) / unit * unit; }

size_t DataOffset(int local_size) {
  return RoundUp(kLinesOffset + kLineBytes * static_cast<size_t>(local_size), kPageBytes);
}

size_t SegmentBytes(int local_size, size_t slot_bytes) {
  return DataOffset(local_size) + 2 * static_cast<size_t>(local_size) * slot_bytes;
}

std::string Errno(int error) { return std::strerror(error); }

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

// Maps `bytes` of `fd`; nullptr and `error` set on failure.
void* MapShared(int fd, size_t bytes, std::string* error) {
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    *error = "mmap of " + std::to_string(bytes) + " bytes: " + Errno(errno);
    return nullptr;
  }
  return base;
}

// Local rank 0: creates and sizes the segment's memory, its size sealed (no rank can shrink it
// under another's mapping); its descriptor, or -1 and `error` set.
int CreateMemory(size_t bytes, std::string* error) {
  const int fd = ::memfd_create("hvdrun-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    *error = "memfd_create: " + Errno(errno);
    return -1;
  }
  if (const int reserved = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); reserved != 0) {
    *error = "reserving " + std::to_string(bytes >> 20) + " MiB of shared memory: " + Errno(reserved);
    ::close(fd);
    return -1;
  }
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    *error = "sealing the shared memory's size: " + Errno(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

// "memfd:hvdrun-shm (inode N)" for the memory that `facts` describe, as /proc/PID/maps names its
// mappings.
std::string DescribeMemory(const struct stat& facts) {
  return "memfd:hvdrun-shm (inode " + std::to_string(facts.st_ino) + ")";
}

// Whether process `pid` has exited, waiting up to `grace` for it: a peer whose end of a socket
// closed because it died is seen dead a moment after the socket closed.
bool Died(pid_t pid, std::chrono::milliseconds grace) {
  const int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH || (::kill(pid, 0) != 0 && errno == ESRCH);
  pollfd exited{fd, POLLIN, 0};
  const bool dead = ::poll(&exited, 1, static_cast<int>(grace.count())) > 0;
  ::close(fd);
  return dead;
}

// A pid as published in the store; 0 when it is not one.
pid_t ParsePid(const std::string& text) {
  pid_t pid = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), pid);
  return error == std::errc() && end == text.data() + text.size() && pid > 0 ? pid : 0;
}

}  // namespace

struct ShmSegment::Header {
  std::atomic<uint64_t> magic;  // written last by the creator
  uint64_t slot_bytes;
  uint32_t local_size;
  char line_end[44];               // the bell on a cache line of its own
  std::atomic<uint32_t> bell;      // rung (incremented, woken) by every arrival and failure
  std::atomic<uint32_t> sleepers;  // ranks asleep on the bell
};

namespace {
RankLine& Line(void* base, int local) {
  return *std::launder(reinterpret_cast<RankLine*>(static_cast<std::byte*>(base) + kLinesOffset +
                                                   kLineBytes * static_cast<size_t>(local)));
}
}  // namespace

size_t ShmSegment::SlotBytesFor(int local_size) {
  constexpr size_t kMinSlotBytes = size_t{256} << 10;
  const size_t share = kSlotBudgetBytes / (2 * static_cast<size_t>(std::max(local_size, 1)));
  return std::max(kMinSlotBytes, share / kPageBytes * kPageBytes);
}

void* ShmSegment::CreateAndHandOver(KeyValueStore& store, const ShmGroup& group, size_t slot_bytes,
                                    std::string* description, std::string* error) {
  const size_t bytes = SegmentBytes(group.local_size, slot_bytes);
  void* base = nullptr;
  std::unique_ptr<FdListener> listener;
  const int fd = CreateMemory(bytes, error);
  if (fd >= 0) base = MapShared(fd, bytes, error);
  if (base != nullptr) {
    auto* header = new (base) Header();
    header->slot_bytes = slot_bytes;
    header->local_size = static_cast<uint32_t>(group.local_size);
    header->magic.store(kMagic, std::memory_order_release);
    struct stat facts {};
    ::fstat(fd, &facts);
    *description = DescribeMemory(facts);
    if (group.local_size > 1) {
      StatusOr<std::unique_ptr<FdListener>> listening = FdListener::Listen();
      if (listening.ok()) {
        listener = std::move(listening).value();
      } else {
        *error = "creating its socket: " + listening.status().message();
      }
    }
  }
  if (group.local_size > 1) {
    // The others check the socket's owner against this pid, and wait for the name: an error goes
    // there too, so that they stop at once.
    bool ready = base != nullptr && listener != nullptr;
    if (Status told = store.Set(group.store_prefix + "pid/0", std::to_string(::getpid()));
        !told.ok() && ready) {
      *error = "publishing its pid: " + told.message();
      ready = false;
    }
    Status published = store.Set(group.store_prefix + "name", ready ? listener->name() : "!" + *error);
    if (!published.ok() && ready) {
      *error = "publishing its socket's name: " + published.message();
    } else if (ready) {
      *error = HandOver(store, group, *listener, fd);
    }
  }
  if (fd >= 0) ::close(fd);
  if (base != nullptr && !error->empty()) {
    ::munmap(base, bytes);
    base = nullptr;
  }
  return base;
}

std::string ShmSegment::HandOver(KeyValueStore& store, const ShmGroup& group, FdListener& listener, int fd) {
  const int n = group.local_size;
  // The local ranks' published pids, read when a peer's pid is not among those known yet, and the
  // local ranks served. Local ranks that are threads of one process share a pid: each connection
  // from it serves one of them.
  std::vector<pid_t> pids(static_cast<size_t>(n), 0);
  std::vector<bool> served(static_cast<size_t>(n), false);
  served[0] = true;
  const auto find = [&](pid_t pid) {
    for (int local = 1; local < n; ++local) {
      if (!served[static_cast<size_t>(local)] && pids[static_cast<size_t>(local)] == pid) return local;
    }
    return -1;
  };
  const FdListener::Admit admit = [&](const PeerCredentials& peer) -> std::string {
    int local = find(peer.pid);
    if (local < 0) {
      for (int other = 1; other < n; ++other) {
        if (served[static_cast<size_t>(other)]) continue;
        StatusOr<std::string> pid =
            store.Get(group.store_prefix + "pid/" + std::to_string(other), std::chrono::milliseconds(0));
        if (pid.ok()) pids[static_cast<size_t>(other)] = ParsePid(pid.value());
      }
      local = find(peer.pid);
    }
    if (local < 0) return "not a local rank of this job";
    served[static_cast<size_t>(local)] = true;
    return "";
  };
  const auto deadline = Clock::now() + group.timeout;
  Status handed = listener.Serve(fd, n - 1, deadline, group.timeout, admit);
  if (handed.ok()) return "";
  std::string missing;
  for (int local = 1; local < n; ++local) {
    if (!served[static_cast<size_t>(local)]) missing += (missing.empty() ? "" : ", ") + std::to_string(local);
  }
  return "handing the segment over: " + (missing.empty() ? "" : "local rank(s) " + missing + " ") +
         handed.message();
}

void* ShmSegment::Receive(KeyValueStore& store, const ShmGroup& group, size_t slot_bytes,
                          std::string* description, std::string* error) {
  const std::string prefix = group.store_prefix;
  if (Status told = store.Set(prefix + "pid/" + std::to_string(group.local_rank), std::to_string(::getpid()));
      !told.ok()) {
    *error = "publishing its pid: " + told.message();
    return nullptr;
  }
  StatusOr<std::string> published = store.Get(prefix + "name", group.timeout);
  if (!published.ok()) {
    *error = "waiting for local rank 0's segment: " + published.status().message();
    return nullptr;
  }
  if (!published.value().empty() && published.value()[0] == '!') {
    *error = "local rank 0 could not create it: " + published.value().substr(1);
    return nullptr;
  }
  StatusOr<std::string> creator = store.Get(prefix + "pid/0", group.timeout);
  const pid_t creator_pid = creator.ok() ? ParsePid(creator.value()) : 0;
  if (creator_pid == 0) {
    *error = "reading local rank 0's pid: " +
             (creator.ok() ? "'" + creator.value() + "'" : creator.status().message());
    return nullptr;
  }
  const std::string who = "local rank 0 (pid " + std::to_string(creator_pid) + ")";
  StatusOr<int> fd = ReceiveFd(published.value(), creator_pid, Clock::now() + group.timeout);
  if (!fd.ok()) {
    *error = Died(creator_pid, std::chrono::milliseconds(200))
                 ? who + " died before it handed the segment over (" + fd.status().message() + ")"
                 : "receiving the segment from " + who + ": " + fd.status().message();
    return nullptr;
  }
  const size_t bytes = SegmentBytes(group.local_size, slot_bytes);
  void* base = nullptr;
  struct stat facts {};
  if (::fstat(fd.value(), &facts) != 0) {
    *error = "fstat of the segment from " + who + ": " + Errno(errno);
  } else if (static_cast<size_t>(facts.st_size) != bytes) {
    *error = "the segment from " + who + " holds " + std::to_string(facts.st_size) + " bytes, not " +
             std::to_string(bytes);
  } else {
    *description = DescribeMemory(facts);
    base = MapShared(fd.value(), bytes, error);
  }
  ::close(fd.value());
  if (base == nullptr) return nullptr;
  const auto* header = std::launder(reinterpret_cast<Header*>(base));
  if (header->magic.load(std::memory_order_acquire) != kMagic ||
      header->local_size != static_cast<uint32_t>(group.local_size) || header->slot_bytes != slot_bytes) {
    *error = "the segment from " + who + " is not this job's";
    ::munmap(base, bytes);
    return nullptr;
  }
  return base;
}

std::string ShmSegment::AgreeOnOutcome(KeyValueStore& store, const ShmGroup& group,
                                       const std::string& error) {
  const std::string prefix = group.store_prefix + "mapped/";
  Status told = store.Set(prefix + std::to_string(group.local_rank),
                          error.empty() ? "" : "!rank " + std::to_string(group.rank) + ": " + error);
  if (!error.empty()) return error;  // this rank's own, first
  std::vector<std::string> keys;
  keys.reserve(static_cast<size_t>(group.local_size));
  for (int local = 0; local < group.local_size; ++local) keys.push_back(prefix + std::to_string(local));
  Status all = told.ok() ? store.Wait(keys, group.timeout) : told;
  if (!all.ok()) return "waiting for the host's local ranks to map it: " + all.message();
  for (int local = 0; local < group.local_size; ++local) {
    StatusOr<std::string> outcome = store.Get(keys[static_cast<size_t>(local)], group.timeout);
    if (!outcome.ok()) return outcome.status().message();
    if (!outcome.value().empty()) {
      return outcome.value().substr(1) + " (local rank " + std::to_string(local) + ")";
    }
  }
  return "";
}

StatusOr<std::unique_ptr<ShmSegment>> ShmSegment::Open(KeyValueStore& store, const ShmGroup& group,
                                                       size_t slot_bytes) {
  const int n = group.local_size;
  const int me = group.local_rank;
  if (n < 1 || n > kMaxLocalRanks || me < 0 || me >= n || slot_bytes == 0 || slot_bytes % 64 != 0) {
    return Status::Error("shared memory: bad group (local rank " + std::to_string(me) + " of " +
                         std::to_string(n) + ", slot of " + std::to_string(slot_bytes) + " bytes)");
  }
  static_assert(sizeof(Header) <= kLinesOffset && offsetof(Header, bell) == 64);
  std::string description;
  std::string error;
  // Each rank writes its line once it has mapped the segment; every rank reads the lines
  // (OpenPidfds) only after all of them agreed that they have.
  void* base = me == 0 ? CreateAndHandOver(store, group, slot_bytes, &description, &error)
                       : Receive(store, group, slot_bytes, &description, &error);
  if (base != nullptr) {
    RankLine& line = Line(base, me);
    line.pid.store(static_cast<int32_t>(::getpid()), std::memory_order_relaxed);
    line.rank.store(group.rank, std::memory_order_relaxed);
  }
  // All local ranks succeed or fail together.
  const std::string failure = AgreeOnOutcome(store, group, base != nullptr ? "" : error);
  const size_t bytes = SegmentBytes(n, slot_bytes);
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

ShmSegment::Header& ShmSegment::header() const { return *std::launder(reinterpret_cast<Header*>(base_)); }

std::byte* ShmSegment::slot(int set, int local_rank) const {
  const size_t index =
      static_cast<size_t>(set) * static_cast<size_t>(group_.local_size) + static_cast<size_t>(local_rank);
  return static_cast<std::byte*>(base_) + DataOffset(group_.local_size) + index * slot_bytes_;
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
  Header& head = header();
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
