#include "common/shell_words.h"

#include <gtest/gtest.h>

namespace hvdrun {
namespace {

using Words = std::vector<std::string>;

Words Split(std::string_view text) {
  StatusOr<Words> words = SplitShellWords(text);
  EXPECT_TRUE(words.ok()) << text << ": " << words.status().message();
  return words.ok() ? words.value() : Words{"<error>"};
}

TEST(ShellWords, BlanksSeparateWords) {
  EXPECT_EQ(Split("-mca btl_tcp_if_include lo"), (Words{"-mca", "btl_tcp_if_include", "lo"}));
  EXPECT_EQ(Split("  a\t\tb\nc  "), (Words{"a", "b", "c"}));
  EXPECT_EQ(Split(""), Words{});
  EXPECT_EQ(Split("   "), Words{});
}

TEST(ShellWords, QuotesAndBackslashesAsAPosixShellReadsThem) {
  EXPECT_EQ(Split("-x 'A=one two' \"B=three four\""), (Words{"-x", "A=one two", "B=three four"}));
  EXPECT_EQ(Split("'it'\\''s'"), Words{"it's"});
  EXPECT_EQ(Split(R"('a\b' "c\d" "e\"f\\g\$h" i\ j \"k)"),
            (Words{"a\\b", "c\\d", "e\"f\\g$h", "i j", "\"k"}));
  EXPECT_EQ(Split("pre'quoted'\"mixed\"post"), Words{"prequotedmixedpost"});
  EXPECT_EQ(Split("'' \"\" x"), (Words{"", "", "x"}));
  EXPECT_EQ(Split("a\\\nb"), Words{"ab"});
  EXPECT_EQ(Split("'$HOME' \"*\" ;|&"), (Words{"$HOME", "*", ";|&"}));
}

TEST(ShellWords, UnterminatedQuotesAndATrailingBackslashAreErrors) {
  for (auto [text, error] :
       {std::pair{"-mca 'btl", "unterminated ' quote"}, std::pair{"\"abc", "unterminated \" quote"},
        std::pair{"\"a\\\"", "unterminated \" quote"}, std::pair{"abc\\", "ends in a lone \\"}}) {
    StatusOr<Words> words = SplitShellWords(text);
    ASSERT_FALSE(words.ok()) << text;
    EXPECT_EQ(words.status().message(), error) << text;
  }
}

TEST(ShellWords, QuotingOnlyWhatAShellWouldChange) {
  EXPECT_EQ(ShellQuote("btl_tcp_if_include"), "btl_tcp_if_include");
  EXPECT_EQ(ShellQuote("-H"), "-H");
  EXPECT_EQ(ShellQuote("localhost:2,127.0.0.1:1"), "localhost:2,127.0.0.1:1");
  EXPECT_EQ(ShellQuote("^openib"), "'^openib'");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("two words"), "'two words'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellJoin({"mpirun", "-np", "2", "a b", "$X"}), "mpirun -np 2 'a b' '$X'");
}

TEST(ShellWords, JoinedWordsSplitBackIntoTheSameWords) {
  Words words = {"plain", "", "a b", "it's", "\"dq\"", "back\\slash", "new\nline", "$(x)", "*", "tab\t", "'"};
  EXPECT_EQ(Split(ShellJoin(words)), words);
}

}  // namespace
}  // namespace hvdrun
