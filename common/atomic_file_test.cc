#include "common/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/e2e/scratch_dir.h"

namespace hvdrun {
namespace {

namespace fs = std::filesystem;

using e2e::ReadFileBytes;

class AtomicFileTest : public ::testing::Test {
 protected:
  size_t EntriesInDir() const {
    size_t entries = 0;
    for ([[maybe_unused]] const fs::directory_entry& entry : fs::directory_iterator(dir_)) ++entries;
    return entries;
  }

  e2e::ScratchDir scratch_;
  const fs::path dir_ = scratch_.path();
};

TEST_F(AtomicFileTest, WritesAndReplacesWholeFiles) {
  const std::string path = (dir_ / "f.json").string();
  ASSERT_TRUE(WriteFileAtomically(path, "first version, longer").ok());
  EXPECT_EQ(ReadFileBytes(path), "first version, longer");
  ASSERT_TRUE(WriteFileAtomically(path, std::string("sec\0nd", 6)).ok());
  EXPECT_EQ(ReadFileBytes(path), std::string("sec\0nd", 6));
  ASSERT_TRUE(WriteFileAtomically(path, "").ok());
  EXPECT_EQ(ReadFileBytes(path), "");
  EXPECT_EQ(EntriesInDir(), 1U) << "a temporary file was left behind";
}

TEST_F(AtomicFileTest, FailuresNameThePathAndLeaveNothingBehind) {
  const std::string missing_dir = (dir_ / "no" / "f.json").string();
  Status status = WriteFileAtomically(missing_dir, "x");
  EXPECT_EQ(status.message(), "cannot write '" + missing_dir + "': No such file or directory");

  // Renaming over a directory fails after the temporary file was written: it must not stay.
  fs::create_directory(dir_ / "taken");
  const std::string taken = (dir_ / "taken").string();
  status = WriteFileAtomically(taken, "x");
  EXPECT_EQ(status.message(), "cannot write '" + taken + "': Is a directory");
  EXPECT_EQ(EntriesInDir(), 1U) << "a temporary file was left behind";
}

TEST_F(AtomicFileTest, WriterReplacesThePathOnlyAtCommit) {
  const std::string path = (dir_ / "f.json").string();
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  {
    StatusOr<AtomicFileWriter> writer = AtomicFileWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    ASSERT_TRUE(writer->Write("piece one, ").ok());
    ASSERT_TRUE(writer->Write("piece two").ok());
    EXPECT_EQ(ReadFileBytes(path), "old");
    ASSERT_TRUE(writer->Commit().ok());
    EXPECT_EQ(ReadFileBytes(path), "piece one, piece two");
    EXPECT_EQ(writer->Write("x").message(), "cannot write '" + path + "': already failed or committed");
  }
  {
    StatusOr<AtomicFileWriter> abandoned = AtomicFileWriter::Open(path);
    ASSERT_TRUE(abandoned.ok());
    ASSERT_TRUE(abandoned->Write("never committed").ok());
  }
  EXPECT_EQ(ReadFileBytes(path), "piece one, piece two");
  EXPECT_EQ(EntriesInDir(), 1U) << "an abandoned temporary file was left behind";
}

TEST_F(AtomicFileTest, SyncsDirectoriesAndNamesOneThatIsNot) {
  EXPECT_TRUE(SyncDirectory(dir_.string()).ok());
  const std::string file = (dir_ / "file").string();
  ASSERT_TRUE(WriteFileAtomically(file, "x").ok());
  EXPECT_EQ(SyncDirectory(file).message(), "cannot sync directory '" + file + "': Not a directory");
}

}  // namespace
}  // namespace hvdrun
