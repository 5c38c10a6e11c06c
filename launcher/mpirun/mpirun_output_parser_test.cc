#include "launcher/mpirun/mpirun_output_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hvdrun {
namespace {

// What the parser passed on, as readable events: "0 out 'text'", "mpirun 'line'"; consecutive
// bytes of one rank and stream are joined into one event.
class Events {
 public:
  MpirunOutputParser::Sink Sink() {
    return {[this](int rank, protocol::OutputStream stream, std::string_view bytes) {
              std::string head =
                  std::to_string(rank) + (stream == protocol::OutputStream::kStdout ? " out '" : " err '");
              if (!events_.empty() && events_.back().rfind(head, 0) == 0 && open_) {
                events_.back().pop_back();
                events_.back() += std::string(bytes) + "'";
              } else {
                events_.push_back(head + std::string(bytes) + "'");
              }
              open_ = true;
            },
            [this](std::string_view line) {
              events_.push_back("mpirun '" + std::string(line) + "'");
              open_ = false;
            }};
  }
  // Ends joining: the next bytes start a new event.
  void Cut() { open_ = false; }
  const std::vector<std::string>& list() const { return events_; }

 private:
  std::vector<std::string> events_;
  bool open_ = false;
};

using Strings = std::vector<std::string>;

// Feeds `input` in pieces of `piece` bytes (0: all at once), then finishes.
Strings Parse(const std::string& input, size_t piece = 0) {
  MpirunOutputParser parser;
  Events events;
  if (piece == 0) piece = input.size() + 1;
  for (size_t i = 0; i < input.size(); i += piece) parser.Feed(input.substr(i, piece), events.Sink());
  parser.Finish(events.Sink());
  return events.list();
}

TEST(MpirunOutputParser, TaggedLinesOfEachRankAndStream) {
  EXPECT_EQ(Parse("[1,0]<stdout>:hello\n[1,1]<stderr>:warning: x\n[1,0]<stdout>:\n"),
            (Strings{"0 out 'hello\n'", "1 err 'warning: x\n'", "0 out '\n'"}));
}

TEST(MpirunOutputParser, EveryWayOfCuttingTheInputGivesTheSameBytes) {
  const std::string input =
      "[1,0]<stdout>:first half [1,1]<stdout>:other\n[1,0]<stdout>:second half\n"
      "mpirun: Error: something\n[1,12]<stderr>:twelve [brackets] [1,x]<stdout>: [1,3]<stdin>:\n"
      "[1,2]<stdout>:no newline at the end";
  const Strings expected = {"0 out 'first half '",
                            "1 out 'other\n'",
                            "0 out 'second half\n'",
                            "mpirun 'mpirun: Error: something'",
                            "12 err 'twelve [brackets] [1,x]<stdout>: [1,3]<stdin>:\n'",
                            "2 out 'no newline at the end'"};
  for (size_t piece : {0, 1, 2, 3, 5, 7, 13}) {
    EXPECT_EQ(Parse(input, piece), expected) << "pieces of " << piece;
  }
}

TEST(MpirunOutputParser, MpirunsOwnLinesAreUntagged) {
  EXPECT_EQ(Parse("-----\nPrimary job  terminated normally\n\n  Process name: [[13857,1],1]\n"),
            (Strings{"mpirun '-----'", "mpirun 'Primary job  terminated normally'", "mpirun ''",
                     "mpirun '  Process name: [[13857,1],1]'"}));
  EXPECT_EQ(Parse("[vm:01234] oops\nlast line without newline"),
            (Strings{"mpirun '[vm:01234] oops'", "mpirun 'last line without newline'"}));
}

TEST(MpirunOutputParser, AnUntaggedLineCutShortByATagEndsThere) {
  EXPECT_EQ(Parse("mpirun says[1,0]<stdout>:rank says\n"),
            (Strings{"mpirun 'mpirun says'", "0 out 'rank says\n'"}));
}

TEST(MpirunOutputParser, TagsOfAnotherJobOrTooLongAreText) {
  EXPECT_EQ(Parse("[1,0]<stdout>:a [2,1]<stdout>:b\n"), (Strings{"0 out 'a [2,1]<stdout>:b\n'"}));
  EXPECT_EQ(Parse("[1,99999999999]<stdout>:x\n"), (Strings{"mpirun '[1,99999999999]<stdout>:x'"}));
  EXPECT_EQ(Parse("[1,2147483648]<stdout>:x\n"), (Strings{"mpirun '[1,2147483648]<stdout>:x'"}));
  EXPECT_EQ(Parse("[1,2147483647]<stdout>:x\n"), (Strings{"2147483647 out 'x\n'"}));
}

TEST(MpirunOutputParser, AnUnfinishedTagAtTheEndIsText) {
  EXPECT_EQ(Parse("[1,0]<stdout>:a\n[1,0]<std"), (Strings{"0 out 'a\n'", "mpirun '[1,0]<std'"}));
  EXPECT_EQ(Parse("[1,0]<stdout>:a [1,0"), (Strings{"0 out 'a [1,0'"}));
}

TEST(MpirunOutputParser, BytesPassUnchanged) {
  std::string bytes("\0\r\xff\x01 tab\t", 9);
  EXPECT_EQ(Parse("[1,5]<stdout>:" + bytes + "\n"), (Strings{"5 out '" + bytes + "\n'"}));
}

TEST(MpirunOutputParser, AnEndlessUntaggedLineIsPassedOnInPieces) {
  std::string line(MpirunOutputParser::kMaxUntaggedLine + 10, 'm');
  Strings events = Parse(line + "\n", 4096);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0], "mpirun '" + line.substr(0, MpirunOutputParser::kMaxUntaggedLine) + "'");
  EXPECT_EQ(events[1], "mpirun 'mmmmmmmmmm'");
}

}  // namespace
}  // namespace hvdrun
