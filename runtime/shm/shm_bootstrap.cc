// ShmSegment::Open's steps (runtime/shm/shm_bootstrap.h).
#include "runtime/shm/shm_bootstrap.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstring>
#include <memory>
#include <new>
#include <system_error>
#include <utility>
#include <vector>

#include "runtime/shm/fd_handover.h"
#include "runtime/shm/shm_layout.h"

namespace hvdrun {
namespace {

using Clock = std::chrono::steady_clock;

std::string Errno(int error) { return std::strerror(error); }

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

// Local rank 0: hands `fd` to every other local rank through `listener` (the contract: shm_segment.h).
std::string HandOver(KeyValueStore& store, const ShmGroup& group, FdListener& listener, int fd) {
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

}  // namespace

void* CreateAndHandOverSegment(KeyValueStore& store, const ShmGroup& group, size_t slot_bytes,
                               std::string* description, std::string* error) {
  const size_t bytes = shm_layout::SegmentBytes(group.local_size, slot_bytes);
  void* base = nullptr;
  std::unique_ptr<FdListener> listener;
  const int fd = CreateMemory(bytes, error);
  if (fd >= 0) base = MapShared(fd, bytes, error);
  if (base != nullptr) {
    auto* header = new (base) shm_layout::Header();
    header->slot_bytes = slot_bytes;
    header->local_size = static_cast<uint32_t>(group.local_size);
    header->magic.store(shm_layout::kMagic, std::memory_order_release);
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

void* ReceiveSegment(KeyValueStore& store, const ShmGroup& group, size_t slot_bytes, std::string* description,
                     std::string* error) {
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
  const size_t bytes = shm_layout::SegmentBytes(group.local_size, slot_bytes);
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
  const shm_layout::Header* header = &shm_layout::HeaderOf(base);
  if (header->magic.load(std::memory_order_acquire) != shm_layout::kMagic ||
      header->local_size != static_cast<uint32_t>(group.local_size) || header->slot_bytes != slot_bytes) {
    *error = "the segment from " + who + " is not this job's";
    ::munmap(base, bytes);
    return nullptr;
  }
  return base;
}

std::string AgreeOnSegmentOutcome(KeyValueStore& store, const ShmGroup& group, const std::string& error) {
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

}  // namespace hvdrun
