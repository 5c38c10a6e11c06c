// Writing small IDX files for tests: gzip-compressed like Debian's dataset-fashion-mnist, or plain.
#ifndef HVDRUN_EXAMPLES_TRAINER_IDX_TEST_FILES_H_
#define HVDRUN_EXAMPLES_TRAINER_IDX_TEST_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace hvdrun::trainer::testing {

// The bytes of an IDX file of unsigned bytes (`type` 0x08 unless a test wants another) with `dims`
// and `values` as given (not checked against each other, so tests can write broken files).
std::string IdxBytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& values,
                     uint8_t type = 0x08);

// Writes `bytes` to `path`, gzip-compressed; false on failure.
bool WriteGzipFile(const std::string& path, const std::string& bytes);

// Writes an MNIST-format data set into `dir` (gzip-compressed): `train` and `test` examples of
// rows × columns pixels; pixel p of example i is (i * 7 + p) % 256, the label of example i is
// i % classes.
bool WriteMnistDataset(const std::string& dir, int train, int test, int rows, int columns, int classes);

}  // namespace hvdrun::trainer::testing

#endif  // HVDRUN_EXAMPLES_TRAINER_IDX_TEST_FILES_H_
