#include "examples/shared/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/e2e/scratch_dir.h"

namespace hvdrun::examples {
namespace {

namespace fs = std::filesystem;

TEST(ExamplesAtomicFileTest, WritesWholeFilesAndLeavesNoTemporary) {
  const e2e::ScratchDir scratch;
  const fs::path dir = scratch.path();
  const std::string path = (dir / "run.json").string();
  ASSERT_TRUE(WriteFileAtomically(path, "{\"a\": 1}\n").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "{}\n").ok());
  EXPECT_EQ(e2e::ReadFileBytes(path), "{}\n");

  fs::create_directory(dir / "taken");
  const std::string taken = (dir / "taken").string();
  EXPECT_EQ(WriteFileAtomically(taken, "x").message(), "cannot write '" + taken + "': Is a directory");
  const std::string missing = (dir / "no" / "run.json").string();
  EXPECT_EQ(WriteFileAtomically(missing, "x").message(),
            "cannot write '" + missing + "': No such file or directory");
  size_t entries = 0;
  for ([[maybe_unused]] const fs::directory_entry& entry : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 2U) << "a temporary file was left behind";
}

}  // namespace
}  // namespace hvdrun::examples
