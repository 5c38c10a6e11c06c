#include "lab/whole_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/process/file_descriptor.h"

namespace hvdrun::lab {

StatusOr<std::string> ReadWholeFile(const std::string& path, size_t max_bytes, std::string_view what) {
  const std::string prefix =
      "cannot read " + (what.empty() ? "" : std::string(what) + " ") + "'" + path + "': ";
  auto fail = [&](const std::string& reason) { return Status::Error(prefix + reason); };
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return fail(std::strerror(errno));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return fail(std::strerror(errno));
  if (S_ISDIR(info.st_mode)) return fail(std::strerror(EISDIR));
  const std::string too_large =
      "it is larger than " + std::to_string(max_bytes) + " bytes, the most hvdrun-lab reads of it";
  if (S_ISREG(info.st_mode) && static_cast<uint64_t>(info.st_size) > max_bytes) return fail(too_large);
  std::string contents;
  char buffer[65536];
  while (true) {
    ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(std::strerror(errno));
    if (n == 0) break;
    // Checked as it is read too: a file that grows, or one that is not a regular file (a pipe).
    if (contents.size() + static_cast<size_t>(n) > max_bytes) return fail(too_large);
    contents.append(buffer, static_cast<size_t>(n));
  }
  return contents;
}

}  // namespace hvdrun::lab
