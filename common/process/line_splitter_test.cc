#include "common/process/line_splitter.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace hvdrun {
namespace {

using Piece = std::pair<std::string, bool>;

class Collector {
 public:
  LineSplitter::EmitFn Fn() {
    return [this](std::string_view data, bool newline) { pieces.emplace_back(std::string(data), newline); };
  }
  // The bytes the pieces stand for: what the rank wrote.
  std::string Joined() const {
    std::string all;
    for (const auto& [data, newline] : pieces) all += data + (newline ? "\n" : "");
    return all;
  }
  std::vector<Piece> pieces;
};

TEST(LineSplitter, CompleteLinesInOneFeed) {
  LineSplitter splitter(100);
  Collector out;
  splitter.Feed("one\ntwo\n\nthree", out.Fn());
  EXPECT_EQ(out.pieces, (std::vector<Piece>{{"one", true}, {"two", true}, {"", true}}));
  splitter.Finish(out.Fn());
  EXPECT_EQ(out.pieces.back(), (Piece{"three", false}));
}

TEST(LineSplitter, LineSplitAcrossFeeds) {
  LineSplitter splitter(100);
  Collector out;
  splitter.Feed("hel", out.Fn());
  EXPECT_TRUE(out.pieces.empty());
  splitter.Feed("lo\nwor", out.Fn());
  splitter.Feed("ld\n", out.Fn());
  splitter.Finish(out.Fn());
  EXPECT_EQ(out.pieces, (std::vector<Piece>{{"hello", true}, {"world", true}}));
}

TEST(LineSplitter, LongLinesComeInPiecesOfTheLimit) {
  LineSplitter splitter(4);
  Collector out;
  splitter.Feed("abcdefghij\nxy", out.Fn());
  splitter.Finish(out.Fn());
  EXPECT_EQ(out.pieces, (std::vector<Piece>{{"abcd", false}, {"efgh", false}, {"ij", true}, {"xy", false}}));
}

TEST(LineSplitter, LineOfExactlyTheLimitIsOnePiece) {
  LineSplitter splitter(4);
  Collector out;
  splitter.Feed("abcd\n", out.Fn());
  EXPECT_EQ(out.pieces, (std::vector<Piece>{{"abcd", true}}));
}

TEST(LineSplitter, BinaryBytesPassUnchanged) {
  LineSplitter splitter(8);
  Collector out;
  std::string bytes("\0\x01\xff\x80\r\n\0\0\0\0\0\0\0\0\0\0\n\x7f", 18);
  splitter.Feed(bytes, out.Fn());
  splitter.Finish(out.Fn());
  EXPECT_EQ(out.Joined(), bytes);
}

TEST(LineSplitter, AnyFeedBoundariesGiveTheSameBytes) {
  std::string text;
  for (int i = 0; i < 200; ++i) {
    text += std::string(static_cast<size_t>(i % 23), static_cast<char>('a' + i % 26)) + "\n";
  }
  text += "tail";
  for (size_t step : {1u, 2u, 7u, 64u, 1000u}) {
    LineSplitter splitter(16);
    Collector out;
    for (size_t at = 0; at < text.size(); at += step) {
      splitter.Feed(std::string_view{text}.substr(at, step), out.Fn());
    }
    splitter.Finish(out.Fn());
    EXPECT_EQ(out.Joined(), text) << "step " << step;
    for (const auto& piece : out.pieces) EXPECT_LE(piece.first.size(), 16u);
  }
}

TEST(LineSplitter, FinishWithNothingPendingEmitsNothing) {
  LineSplitter splitter(8);
  Collector out;
  splitter.Feed("done\n", out.Fn());
  splitter.Finish(out.Fn());
  EXPECT_EQ(out.pieces.size(), 1u);
}

}  // namespace
}  // namespace hvdrun
