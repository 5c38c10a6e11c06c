#include "examples/shared/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace hvdrun::examples {
namespace {

// Writes all of `data` to `fd` and syncs it; false with errno set on failure.
bool WriteAndSync(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return ::fsync(fd) == 0;
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool written = fd >= 0 && WriteAndSync(fd, contents);
  int error = errno;
  if (fd >= 0 && ::close(fd) != 0 && written) {
    written = false;
    error = errno;
  }
  if (written && ::rename(temporary.c_str(), path.c_str()) != 0) {
    written = false;
    error = errno;
  }
  if (!written) {
    ::unlink(temporary.c_str());
    return Status::Error("cannot write '" + path + "': " + std::strerror(error));
  }
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  const int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const bool synced = dir_fd >= 0 && ::fsync(dir_fd) == 0;
  error = errno;
  if (dir_fd >= 0) ::close(dir_fd);
  if (!synced) {
    return Status::Error("cannot write '" + path + "': syncing its directory: " + std::strerror(error));
  }
  return Status::Ok();
}

}  // namespace hvdrun::examples
