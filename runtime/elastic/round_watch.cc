#include "runtime/elastic/round_watch.h"

#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <utility>

#include "common/whole_number.h"
#include "runtime/elastic/round_store.h"

namespace hvdrun {
namespace {

// How often the watch reads the job's round.
constexpr std::chrono::milliseconds kRoundPoll{500};

}  // namespace

OpenSocketTable OpenSockets() {
  OpenSocketTable sockets;
  DIR* fds = ::opendir("/proc/self/fd");
  if (fds == nullptr) return sockets;
  while (const dirent* entry = ::readdir(fds)) {
    const ParsedWholeNumber parsed = ParseWholeNumber(entry->d_name, 0, INT_MAX);
    if (!parsed.ok()) continue;  // "." and ".."
    const int fd = static_cast<int>(parsed.value);
    struct stat info {};
    if (fd != ::dirfd(fds) && ::fstat(fd, &info) == 0 && S_ISSOCK(info.st_mode)) sockets[fd] = info.st_ino;
  }
  ::closedir(fds);
  return sockets;
}

namespace {

// The sockets of `after` that `before` lacks, or that are other sockets there.
OpenSocketTable NewSockets(const OpenSocketTable& before, const OpenSocketTable& after) {
  OpenSocketTable added;
  for (const auto& [fd, inode] : after) {
    auto old = before.find(fd);
    if (old == before.end() || old->second != inode) added.emplace(fd, inode);
  }
  return added;
}

}  // namespace

RoundWatch::RoundWatch(std::shared_ptr<KeyValueStore> job_store, int round, int64_t hosts_updated,
                       const OpenSocketTable& before, const OpenSocketTable& after)
    : job_store_(std::move(job_store)), round_(round), hosts_updated_(hosts_updated) {
  sockets_ = NewSockets(before, after);
  thread_ = std::thread([this] { Watch(); });
}

RoundWatch::~RoundWatch() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RoundWatch::Add(const OpenSocketTable& before, const OpenSocketTable& after) {
  const OpenSocketTable added = NewSockets(before, after);
  std::lock_guard<std::mutex> lock(mutex_);
  if (ended_) {
    EndSockets(added);
    return;
  }
  for (const auto& [fd, inode] : added) sockets_[fd] = inode;
}

void RoundWatch::Watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, kRoundPoll, [this] { return stopping_; })) {
    if (sockets_.empty()) continue;  // nothing to end yet: the store is not read
    lock.unlock();
    const bool over = RoundIsOver();
    lock.lock();
    if (over && !stopping_) {
      EndSockets(sockets_);
      ended_ = true;
      return;
    }
  }
}

bool RoundWatch::RoundIsOver() const {
  StatusOr<int64_t> newest = ReadNewestRound(*job_store_);
  if (!newest.ok() || newest.value() <= round_) return false;
  StatusOr<int64_t> hosts_updated = job_store_->Add(kElasticHostsUpdatedKey, 0);
  return hosts_updated.ok() && hosts_updated.value() == hosts_updated_;
}

void RoundWatch::EndSockets(const OpenSocketTable& sockets) {
  for (const auto& [fd, inode] : sockets) {
    // Only while the descriptor is still the runtime's socket: a closed one's number may be reused.
    struct stat info {};
    if (::fstat(fd, &info) == 0 && S_ISSOCK(info.st_mode) && info.st_ino == inode) ::shutdown(fd, SHUT_RD);
  }
}

}  // namespace hvdrun
