// What ranks write: tagged lines on hvdrun's console, and the exact bytes in --output-filename logs.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/e2e/console_output.h"
#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/rank_log_bytes.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

// Console lines are cut into pieces of at most this many bytes.
constexpr size_t kMaxConsolePiece = size_t{64} * 1024;

TEST(OutputTest, LastLineWithoutNewlineIsPrintedTaggedWithANewline) {
  ProcessResult result = RunHvdrun(Concat({{"-np", "1"}, RankCommand({"partial"})}));
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_EQ(result.stdout_text, "[0]<stdout>:first line\n[0]<stdout>:no newline at end\n");
  EXPECT_EQ(result.stderr_text, "[0]<stderr>:error line\n[0]<stderr>:error without newline\n");
}

TEST(OutputTest, LongLineIsPrintedAsTaggedPiecesOfAtMost64KiB) {
  constexpr size_t kLineBytes = 150'000;
  ProcessResult result =
      RunHvdrun(Concat({{"-np", "1"}, RankCommand({"long-line", std::to_string(kLineBytes)})}));
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_TRUE(UntaggedLines(result.stdout_text).empty()) << result;

  std::vector<std::string> lines = TaggedLines(result.stdout_text, "stdout")[0];
  ASSERT_GE(lines.size(), 4u) << "expected three pieces and the line 'after'" << result;
  EXPECT_EQ(lines.back(), "after");
  lines.pop_back();
  std::string joined;
  for (const std::string& piece : lines) {
    EXPECT_LE(piece.size(), kMaxConsolePiece);
    EXPECT_FALSE(piece.empty());
    joined += piece;
  }
  std::string expected;
  for (size_t i = 0; i < kLineBytes; ++i) expected.push_back(static_cast<char>('a' + i % 26));
  EXPECT_EQ(joined.size(), expected.size());
  EXPECT_TRUE(joined == expected) << "the pieces, joined, are not the line the rank wrote";
}

TEST(OutputTest, RankLogFilesHoldExactlyTheBytesWritten) {
  ScratchDir dir;
  const std::string logs = dir.path() + "/logs";
  ProcessResult result =
      RunHvdrun(Concat({{"-np", "2", "--output-filename", logs}, RankCommand({"log-bytes"})}));
  ASSERT_EQ(result.exit_code, 0) << result;

  for (int rank = 0; rank < 2; ++rank) {
    for (bool is_stdout : {true, false}) {
      const std::string stream = is_stdout ? "stdout" : "stderr";
      SCOPED_TRACE("rank " + std::to_string(rank) + " " + stream);
      const std::string expected = RankLogBytes(rank, is_stdout);
      const std::string path = logs + "/rank." + std::to_string(rank) + "/";
      const std::string actual = ReadFileBytes(path + stream);
      ASSERT_EQ(actual.size(), expected.size());
      // Compared as a whole; a mismatch names the first differing offset instead of dumping 1 MiB.
      size_t first_difference = 0;
      while (first_difference < actual.size() && actual[first_difference] == expected[first_difference]) {
        ++first_difference;
      }
      EXPECT_EQ(first_difference, actual.size()) << "first differing byte at this offset";

      // The console shows the same output, tagged; its last line had no newline in the log.
      std::vector<std::string> console_lines =
          TaggedLines(is_stdout ? result.stdout_text : result.stderr_text, stream)[rank];
      ASSERT_FALSE(console_lines.empty());
      EXPECT_EQ(console_lines.back(),
                "rank " + std::to_string(rank) + " " + stream + ": last line, no newline");
    }
  }
}

}  // namespace
}  // namespace hvdrun::e2e
