#include "launcher/output_router.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hvdrun {
namespace {

using protocol::OutputStream;
using protocol::RankOutput;

// Console streams backed by memory, read back as strings.
class MemoryConsole {
 public:
  MemoryConsole()
      : out_(open_memstream(&out_buffer_, &out_size_)), err_(open_memstream(&err_buffer_, &err_size_)) {}
  ~MemoryConsole() {
    std::fclose(out_);
    std::fclose(err_);
    std::free(out_buffer_);
    std::free(err_buffer_);
  }
  std::FILE* out() { return out_; }
  std::FILE* err() { return err_; }
  std::string Out() {
    std::fflush(out_);
    return std::string(out_buffer_, out_size_);
  }
  std::string Err() {
    std::fflush(err_);
    return std::string(err_buffer_, err_size_);
  }

 private:
  char* out_buffer_ = nullptr;
  size_t out_size_ = 0;
  char* err_buffer_ = nullptr;
  size_t err_size_ = 0;
  std::FILE* out_;
  std::FILE* err_;
};

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

TEST(OutputRouter, TagsLinesTheHorovodrunWay) {
  MemoryConsole console;
  OutputRouter router(console.out(), console.err());
  router.Write(RankOutput{0, OutputStream::kStdout, true, "hello"});
  router.Write(RankOutput{12, OutputStream::kStderr, true, "warning: x"});
  router.Write(RankOutput{1, OutputStream::kStdout, false, "no newline"});
  router.Flush();
  EXPECT_EQ(console.Out(), "[0]<stdout>:hello\n[1]<stdout>:no newline\n");
  EXPECT_EQ(console.Err(), "[12]<stderr>:warning: x\n");
}

TEST(OutputRouter, RankFilesHoldTheExactBytes) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("hvdrun_router_" + std::to_string(::getpid()));
  MemoryConsole console;
  {
    OutputRouter router(console.out(), console.err());
    ASSERT_TRUE(router.OpenRankFiles(dir.string(), 2).ok());
    router.Write(RankOutput{1, OutputStream::kStdout, false, "piece one "});
    router.Write(RankOutput{1, OutputStream::kStdout, true, "and two"});
    router.Write(RankOutput{1, OutputStream::kStdout, false, std::string("\0\xff", 2)});
    router.Write(RankOutput{0, OutputStream::kStderr, true, "err"});
    router.Flush();
  }
  EXPECT_EQ(ReadFile(dir / "rank.1" / "stdout"), std::string("piece one and two\n\0\xff", 20));
  EXPECT_EQ(ReadFile(dir / "rank.0" / "stderr"), "err\n");
  EXPECT_EQ(ReadFile(dir / "rank.0" / "stdout"), "");
  EXPECT_TRUE(std::filesystem::exists(dir / "rank.1" / "stderr"));
  std::filesystem::remove_all(dir);
}

TEST(OutputRouter, AProcessStartedLaterShowsItsRoundRankAndHasItsOwnFiles) {
  EXPECT_EQ(RoundRankDirName(0, 3, 12), "rank.03");
  EXPECT_EQ(RoundRankDirName(2, 3, 12), "round.2/rank.03");
  EXPECT_EQ(RoundRankDirName(1, 1, 2), "round.1/rank.1");
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("hvdrun_router_later_" + std::to_string(::getpid()));
  MemoryConsole console;
  {
    OutputRouter router(console.out(), console.err());
    ASSERT_TRUE(router.OpenRankFiles(dir.string(), 2).ok());
    // Process 2 joined round 1 as its rank 1; process 1 became rank 2 there.
    ASSERT_TRUE(router.AddRankFiles(2, (dir / RoundRankDirName(1, 1, 3)).string()).ok());
    router.ShowAs(2, 1);
    router.ShowAs(1, 2);
    router.Write(RankOutput{2, OutputStream::kStdout, true, "new"});
    router.Write(RankOutput{1, OutputStream::kStderr, true, "old"});
    router.Flush();
    EXPECT_EQ(router.StderrTail(1), std::vector<std::string>{"old"});  // by process
  }
  EXPECT_EQ(console.Out(), "[1]<stdout>:new\n");
  EXPECT_EQ(console.Err(), "[2]<stderr>:old\n");
  EXPECT_EQ(ReadFile(dir / "round.1" / "rank.1" / "stdout"), "new\n");
  EXPECT_EQ(ReadFile(dir / "rank.1" / "stderr"), "old\n");
  std::filesystem::remove_all(dir);
}

TEST(OutputRouter, UnwritableDirectoryIsNamed) {
  MemoryConsole console;
  OutputRouter router(console.out(), console.err());
  Status status = router.OpenRankFiles("/proc/hvdrun-cannot-exist", 1);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("--output-filename: cannot create '/proc/hvdrun-cannot-exist/rank.0'", 0),
            0u)
      << status.message();
}

TEST(OutputRouter, KeepsTheLastStderrLinesPerRank) {
  MemoryConsole console;
  OutputRouter router(console.out(), console.err());
  for (int i = 0; i < 8; ++i) {
    router.Write(RankOutput{3, OutputStream::kStderr, true, "line " + std::to_string(i)});
  }
  router.Write(RankOutput{3, OutputStream::kStdout, true, "stdout is not kept"});
  router.Write(RankOutput{3, OutputStream::kStderr, false, "partial"});
  EXPECT_EQ(router.StderrTail(3),
            (std::vector<std::string>{"line 4", "line 5", "line 6", "line 7", "partial"}));
  EXPECT_TRUE(router.StderrTail(0).empty());
}

}  // namespace
}  // namespace hvdrun
