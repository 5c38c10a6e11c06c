#include "lab/whole_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/file_descriptor.h"

namespace hvdrun::lab {

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  std::string temporary = path + ".tmp." + std::to_string(::getpid());
  auto fail = [&](int error) {
    ::unlink(temporary.c_str());
    return Status::Error("cannot write '" + path + "': " + std::strerror(error));
  };
  UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return fail(errno);
  if (!WriteAll(fd.get(), contents) || ::fsync(fd.get()) != 0) return fail(errno);
  fd.Reset();
  if (::rename(temporary.c_str(), path.c_str()) != 0) return fail(errno);
  return Status::Ok();
}

StatusOr<std::string> ReadWholeFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::Error("cannot read '" + path + "': " + std::strerror(errno));
  std::string contents;
  char buffer[65536];
  while (true) {
    ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Error("cannot read '" + path + "': " + std::strerror(errno));
    if (n == 0) break;
    contents.append(buffer, static_cast<size_t>(n));
  }
  return contents;
}

}  // namespace hvdrun::lab
