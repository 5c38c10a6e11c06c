// UniqueFd, an owned POSIX file descriptor, and the few fd operations launcher and agent share.
// Not thread-safe; an fd is owned by exactly one UniqueFd.
#ifndef HVDRUN_COMMON_PROCESS_FILE_DESCRIPTOR_H_
#define HVDRUN_COMMON_PROCESS_FILE_DESCRIPTOR_H_

#include <string_view>
#include <utility>

namespace hvdrun {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) Reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() { return std::exchange(fd_, -1); }
  // Closes the current descriptor (if any) and takes `fd`.
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// A pipe with both ends close-on-exec. Returns false (errno set) on failure.
bool MakePipe(Pipe* pipe);

// Writes all of `data`, retrying on EINTR and short writes; blocks on a full pipe even when the fd
// is non-blocking. Returns false (errno set) on failure, EPIPE included.
bool WriteAll(int fd, std::string_view data);

bool SetNonBlocking(int fd);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PROCESS_FILE_DESCRIPTOR_H_
