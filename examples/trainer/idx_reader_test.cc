#include "examples/trainer/idx_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "examples/trainer/idx_test_files.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::trainer {
namespace {

using e2e::ScratchDir;
using testing::IdxBytes;
using testing::WriteGzipFile;

std::string ReadError(const std::string& path) {
  StatusOr<IdxArray> array = ReadIdxFile(path);
  return array.ok() ? "OK" : array.status().message();
}

TEST(IdxReaderTest, ReadsAGzippedImageArray) {
  ScratchDir dir;
  std::vector<uint8_t> values(size_t{2} * 3 * 4);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint8_t>(i * 10);
  std::string path = dir.path() + "/images.gz";
  ASSERT_TRUE(WriteGzipFile(path, IdxBytes({2, 3, 4}, values)));
  StatusOr<IdxArray> array = ReadIdxFile(path);
  ASSERT_TRUE(array.ok()) << array.status().message();
  EXPECT_EQ(array->dims, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(array->values, values);
}

TEST(IdxReaderTest, ReadsAPlainFileAndLargeDimensions) {
  ScratchDir dir;
  // A dimension above 65535 checks the big-endian decoding of every byte.
  std::vector<uint8_t> values(70'000, 7);
  values.back() = 9;
  std::string path = dir.WriteFile("labels", IdxBytes({70'000}, values));
  StatusOr<IdxArray> array = ReadIdxFile(path);
  ASSERT_TRUE(array.ok()) << array.status().message();
  EXPECT_EQ(array->dims, (std::vector<int64_t>{70'000}));
  EXPECT_EQ(array->values, values);
}

TEST(IdxReaderTest, ErrorsNameTheFileAndTheFault) {
  ScratchDir dir;
  const std::string missing = dir.path() + "/missing.gz";
  EXPECT_EQ(ReadError(missing), "cannot read '" + missing + "': No such file or directory");

  std::string not_idx = dir.WriteFile("text", "hello, world");
  EXPECT_EQ(ReadError(not_idx),
            "'" + not_idx + "': not an IDX file (it does not start with 00 00 <type> <dimensions>)");

  std::string floats = dir.path() + "/floats.gz";
  ASSERT_TRUE(WriteGzipFile(floats, IdxBytes({1}, {0, 0, 0, 0}, 0x0D)));
  EXPECT_EQ(ReadError(floats),
            "'" + floats + "': IDX values of type 0x0d are not supported (only unsigned bytes, 0x08)");

  std::string truncated = dir.path() + "/truncated.gz";
  ASSERT_TRUE(WriteGzipFile(truncated, IdxBytes({2, 2, 2}, {1, 2, 3})));
  EXPECT_EQ(ReadError(truncated),
            "'" + truncated + "': truncated: the header announces 8 values, the file holds 3");

  std::string short_header = dir.path() + "/header.gz";
  ASSERT_TRUE(WriteGzipFile(short_header, IdxBytes({}, {}).substr(0, 3) + std::string("\x02\x00\x00", 3)));
  EXPECT_EQ(ReadError(short_header), "'" + short_header + "': truncated in the header (dimension 0)");

  std::string extra = dir.path() + "/extra.gz";
  ASSERT_TRUE(WriteGzipFile(extra, IdxBytes({2}, {1, 2, 3})));
  EXPECT_EQ(ReadError(extra), "'" + extra + "': more bytes than the header's 2 values");
}

TEST(IdxReaderTest, ACorruptGzipStreamIsAnError) {
  ScratchDir dir;
  std::string good = dir.path() + "/good.gz";
  ASSERT_TRUE(WriteGzipFile(good, IdxBytes({4096}, std::vector<uint8_t>(4096, 1))));
  std::string bytes = e2e::ReadFileBytes(good);
  ASSERT_GT(bytes.size(), 20U);
  // Damage the compressed data (after the 10-byte gzip header), keeping the length.
  for (size_t i = 12; i < bytes.size() - 8; ++i) bytes[i] = static_cast<char>(bytes[i] ^ 0x5A);
  std::string bad = dir.WriteFile("bad.gz", bytes);
  std::string error = ReadError(bad);
  EXPECT_EQ(error.rfind("'" + bad + "': ", 0), 0U) << error;
  EXPECT_NE(error, "OK");
}

}  // namespace
}  // namespace hvdrun::trainer
