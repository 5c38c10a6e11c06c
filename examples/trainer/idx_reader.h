// Reading IDX files, the format of MNIST and Fashion-MNIST (http://yann.lecun.com/exdb/mnist/):
// magic 0x00 0x00 <type> <dimensions>, then each dimension as a big-endian uint32, then the values,
// row-major. Files may be gzip-compressed or plain (zlib reads both). Only unsigned-byte values
// (type 0x08) are read: the type MNIST-format images and labels use.
#ifndef HVDRUN_EXAMPLES_TRAINER_IDX_READER_H_
#define HVDRUN_EXAMPLES_TRAINER_IDX_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun::trainer {

struct IdxArray {
  std::vector<int64_t> dims;    // [images, rows, columns] or [labels]
  std::vector<uint8_t> values;  // product(dims) values, row-major
};

// The whole array in `path`. Errors name the file and what is wrong with it: cannot be opened,
// not IDX (wrong magic), a type other than unsigned bytes, fewer values than the dimensions say
// (truncated), bytes after the values, or a gzip stream that is corrupt.
StatusOr<IdxArray> ReadIdxFile(const std::string& path);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_IDX_READER_H_
