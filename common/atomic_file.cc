#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/file_descriptor.h"

namespace hvdrun {
namespace {

// 0, or the errno of opening or syncing directory `dir`.
int SyncDirectoryEntries(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid() || ::fsync(fd.get()) != 0) return errno;
  return 0;
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  auto fail = [&](int error) {
    ::unlink(temporary.c_str());
    return Status::Error("cannot write '" + path + "': " + std::strerror(error));
  };
  UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return fail(errno);
  if (!WriteAll(fd.get(), contents) || ::fsync(fd.get()) != 0) return fail(errno);
  // close() reports a deferred write error on some file systems (NFS): the file is not known whole before it.
  if (::close(fd.Release()) != 0) return fail(errno);
  if (::rename(temporary.c_str(), path.c_str()) != 0) return fail(errno);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  if (int error = SyncDirectoryEntries(dir.empty() ? "." : dir); error != 0) {
    return Status::Error("cannot write '" + path + "': syncing its directory: " + std::strerror(error));
  }
  return Status::Ok();
}

Status SyncDirectory(const std::string& dir) {
  if (int error = SyncDirectoryEntries(dir); error != 0) {
    return Status::Error("cannot sync directory '" + dir + "': " + std::strerror(error));
  }
  return Status::Ok();
}

}  // namespace hvdrun
