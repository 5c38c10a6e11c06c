#include "examples/shared/atomic_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace hvdrun::examples {
namespace {

namespace fs = std::filesystem;

std::string ReadBack(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

TEST(ExamplesAtomicFileTest, WritesWholeFilesAndLeavesNoTemporary) {
  const fs::path dir = fs::temp_directory_path() / ("hvdrun_examples_atomic_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "run.json").string();
  ASSERT_TRUE(WriteFileAtomically(path, "{\"a\": 1}\n").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "{}\n").ok());
  EXPECT_EQ(ReadBack(path), "{}\n");

  fs::create_directory(dir / "taken");
  const std::string taken = (dir / "taken").string();
  EXPECT_EQ(WriteFileAtomically(taken, "x").message(), "cannot write '" + taken + "': Is a directory");
  const std::string missing = (dir / "no" / "run.json").string();
  EXPECT_EQ(WriteFileAtomically(missing, "x").message(),
            "cannot write '" + missing + "': No such file or directory");
  size_t entries = 0;
  for ([[maybe_unused]] const fs::directory_entry& entry : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 2U) << "a temporary file was left behind";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hvdrun::examples
