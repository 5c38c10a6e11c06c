#include "examples/trainer/idx_test_files.h"

#include <zlib.h>

namespace hvdrun::trainer::testing {

std::string IdxBytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& values, uint8_t type) {
  std::string bytes = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t dim : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes += static_cast<char>((dim >> shift) & 0xFF);
  }
  bytes.append(values.begin(), values.end());
  return bytes;
}

bool WriteGzipFile(const std::string& path, const std::string& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  if (file == nullptr) return false;
  bool ok = bytes.empty() || gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())) ==
                                 static_cast<int>(bytes.size());
  return gzclose(file) == Z_OK && ok;
}

bool WriteMnistDataset(const std::string& dir, int train, int test, int rows, int columns, int classes) {
  for (auto [prefix, count] :
       {std::pair<std::string, int>("train", train), std::pair<std::string, int>("t10k", test)}) {
    std::vector<uint8_t> pixels;
    std::vector<uint8_t> labels;
    for (int i = 0; i < count; ++i) {
      for (int p = 0; p < rows * columns; ++p) pixels.push_back(static_cast<uint8_t>((i * 7 + p) % 256));
      labels.push_back(static_cast<uint8_t>(i % classes));
    }
    const auto n = static_cast<uint32_t>(count);
    if (!WriteGzipFile(dir + "/" + prefix + "-images-idx3-ubyte.gz",
                       IdxBytes({n, static_cast<uint32_t>(rows), static_cast<uint32_t>(columns)}, pixels)) ||
        !WriteGzipFile(dir + "/" + prefix + "-labels-idx1-ubyte.gz", IdxBytes({n}, labels))) {
      return false;
    }
  }
  return true;
}

}  // namespace hvdrun::trainer::testing
