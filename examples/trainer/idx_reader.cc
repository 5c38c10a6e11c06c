#include "examples/trainer/idx_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

namespace hvdrun::trainer {
namespace {

constexpr uint8_t kUnsignedByteType = 0x08;
// No MNIST-format set comes near this; it keeps a corrupt header from asking for terabytes.
constexpr int64_t kMaxValues = int64_t{1} << 34;

struct GzFileCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};
using GzFile = std::unique_ptr<gzFile_s, GzFileCloser>;

std::string Hex(uint32_t value, int digits) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%0*x", digits, value);
  return text;
}

// Reads exactly `size` bytes; the count actually read, or -1 with zlib's message in `*error`.
int64_t ReadFully(gzFile_s* file, void* buffer, size_t size, std::string* error) {
  auto* out = static_cast<unsigned char*>(buffer);
  size_t done = 0;
  while (done < size) {
    constexpr size_t kChunk = size_t{1} << 30;
    unsigned int want = static_cast<unsigned int>(std::min(size - done, kChunk));
    int got = gzread(file, out + done, want);
    if (got < 0) {
      int code = 0;
      const char* message = gzerror(file, &code);
      *error = code == Z_ERRNO ? std::strerror(errno) : message;
      return -1;
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return static_cast<int64_t>(done);
}

}  // namespace

StatusOr<IdxArray> ReadIdxFile(const std::string& path) {
  const std::string where = "'" + path + "'";
  errno = 0;
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) {
    return Status::Error("cannot read " + where + ": " +
                         (errno != 0 ? std::strerror(errno) : "out of memory"));
  }
  std::string error;
  unsigned char magic[4];
  int64_t got = ReadFully(file.get(), magic, sizeof(magic), &error);
  if (got < 0) return Status::Error(where + ": " + error);
  if (got < 4 || magic[0] != 0 || magic[1] != 0 || magic[3] == 0) {
    return Status::Error(where + ": not an IDX file (it does not start with 00 00 <type> <dimensions>)");
  }
  if (magic[2] != kUnsignedByteType) {
    return Status::Error(where + ": IDX values of type " + Hex(magic[2], 2) +
                         " are not supported (only unsigned bytes, 0x08)");
  }
  IdxArray array;
  int64_t count = 1;
  for (int d = 0; d < magic[3]; ++d) {
    unsigned char bytes[4];
    got = ReadFully(file.get(), bytes, sizeof(bytes), &error);
    if (got < 0) return Status::Error(where + ": " + error);
    if (got < 4) {
      return Status::Error(where + ": truncated in the header (dimension " + std::to_string(d) + ")");
    }
    int64_t dim = (int64_t{bytes[0]} << 24) | (int64_t{bytes[1]} << 16) | (int64_t{bytes[2]} << 8) | bytes[3];
    array.dims.push_back(dim);
    if (dim != 0 && count > kMaxValues / dim) {
      return Status::Error(where + ": dimensions describe more than " + std::to_string(kMaxValues) +
                           " values");
    }
    count *= dim;
  }
  array.values.resize(static_cast<size_t>(count));
  got = ReadFully(file.get(), array.values.data(), array.values.size(), &error);
  if (got < 0) return Status::Error(where + ": " + error);
  if (got < count) {
    return Status::Error(where + ": truncated: the header announces " + std::to_string(count) +
                         " values, the file holds " + std::to_string(got));
  }
  unsigned char extra = 0;
  got = ReadFully(file.get(), &extra, 1, &error);
  if (got < 0) return Status::Error(where + ": " + error);
  if (got > 0) {
    return Status::Error(where + ": more bytes than the header's " + std::to_string(count) + " values");
  }
  return array;
}

}  // namespace hvdrun::trainer
