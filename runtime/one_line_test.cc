#include "runtime/one_line.h"

#include <gtest/gtest.h>

namespace hvdrun {
namespace {

TEST(OneLine, LineBreaksBecomeSpacesAndTheTrailingOnesGo) {
  EXPECT_EQ(OneLine("libgloo.so.0: cannot open shared object file"),
            "libgloo.so.0: cannot open shared object file");
  EXPECT_EQ(OneLine("first\nsecond\r\nthird"), "first second  third");
  EXPECT_EQ(OneLine("[enforce fail at tcp/pair.cc:446] read: Connection reset\n"),
            "[enforce fail at tcp/pair.cc:446] read: Connection reset");
  EXPECT_EQ(OneLine("ncclSystemError (socket closed\n)"), "ncclSystemError (socket closed )");
  EXPECT_EQ(OneLine("\r\n"), "");
  EXPECT_EQ(OneLine(""), "");
}

}  // namespace
}  // namespace hvdrun
