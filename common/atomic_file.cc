#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

namespace hvdrun {
namespace {

// 0, or the errno of opening or syncing directory `dir`.
int SyncDirectoryEntries(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid() || ::fsync(fd.get()) != 0) return errno;
  return 0;
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::string path)
    : path_(std::move(path)), temporary_(path_ + ".tmp." + std::to_string(::getpid())) {}

AtomicFileWriter& AtomicFileWriter::operator=(AtomicFileWriter&& other) noexcept {
  if (this != &other) {
    Discard();
    path_ = std::move(other.path_);
    temporary_ = std::move(other.temporary_);
    fd_ = std::move(other.fd_);
  }
  return *this;
}

AtomicFileWriter::~AtomicFileWriter() { Discard(); }

void AtomicFileWriter::Discard() {
  if (!fd_.valid()) return;
  fd_.Reset();
  ::unlink(temporary_.c_str());
}

Status AtomicFileWriter::Fail(int error) {
  fd_.Reset();
  ::unlink(temporary_.c_str());
  return Status::Error("cannot write '" + path_ + "': " + std::strerror(error));
}

StatusOr<AtomicFileWriter> AtomicFileWriter::Open(const std::string& path) {
  AtomicFileWriter writer(path);
  writer.fd_.Reset(::open(writer.temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!writer.fd_.valid()) return writer.Fail(errno);
  return writer;
}

Status AtomicFileWriter::Write(std::string_view data) {
  if (!fd_.valid()) return Status::Error("cannot write '" + path_ + "': already failed or committed");
  if (!WriteAll(fd_.get(), data)) return Fail(errno);
  return Status::Ok();
}

Status AtomicFileWriter::Commit() {
  if (!fd_.valid()) return Status::Error("cannot write '" + path_ + "': already failed or committed");
  if (::fsync(fd_.get()) != 0) return Fail(errno);
  // close() reports a deferred write error on some file systems (NFS): the file is not known whole before it.
  if (::close(fd_.Release()) != 0) return Fail(errno);
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) return Fail(errno);
  const std::string dir = std::filesystem::path(path_).parent_path().string();
  if (int error = SyncDirectoryEntries(dir.empty() ? "." : dir); error != 0) {
    return Status::Error("cannot write '" + path_ + "': syncing its directory: " + std::strerror(error));
  }
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  StatusOr<AtomicFileWriter> writer = AtomicFileWriter::Open(path);
  if (!writer.ok()) return writer.status();
  if (Status status = writer->Write(contents); !status.ok()) return status;
  return writer->Commit();
}

Status SyncDirectory(const std::string& dir) {
  if (int error = SyncDirectoryEntries(dir); error != 0) {
    return Status::Error("cannot sync directory '" + dir + "': " + std::strerror(error));
  }
  return Status::Ok();
}

}  // namespace hvdrun
