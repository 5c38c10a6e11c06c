#include "lab/run/progress_display.h"

#include <gtest/gtest.h>

#include <sstream>

namespace hvdrun::lab {
namespace {

using Clock = ProgressDisplay::Clock;
using std::chrono::seconds;

TEST(ProgressDisplay, PlainLinesWithCountsAndEstimate) {
  std::ostringstream out;
  const Clock::time_point t0{};
  ProgressDisplay::Options options;
  options.total_runs = 4;
  ProgressDisplay display(out, options, t0);
  display.AddKeptRuns(1, 0);
  display.RunStarted("np=1", t0);
  display.Tick(t0 + seconds(5));  // nothing on a pipe
  display.RunFinished(true, "", 10, t0 + seconds(10));
  display.RunStarted("np=2", t0 + seconds(10));
  display.RunFinished(false, "hvdrun ended with exit code 3", 20, t0 + seconds(30));
  display.Finish();
  // After the first run: 10 s a run, 2 left; after the second: 15 s a run, 1 left.
  EXPECT_EQ(out.str(),
            "[1/4] running np=1 (0:00 elapsed, estimating what is left)\n"
            "[2/4] ok     np=1 in 10.0 s (0:10 elapsed, about 0:20 left)\n"
            "[2/4] running np=2 (0:10 elapsed, about 0:20 left)\n"
            "[3/4, 1 failed] FAILED np=2 in 20.0 s: hvdrun ended with exit code 3 (0:30 elapsed, about 0:15 "
            "left)\n");
}

TEST(ProgressDisplay, KeptRunsGiveTheFirstEstimate) {
  std::ostringstream out;
  ProgressDisplay::Options options;
  options.total_runs = 3;
  ProgressDisplay display(out, options, Clock::time_point{});
  display.AddKeptRuns(1, 60);
  display.RunStarted("x", Clock::time_point{});
  EXPECT_EQ(out.str(), "[1/3] running x (0:00 elapsed, about 2:00 left)\n");
}

TEST(ProgressDisplay, TerminalRedrawsOneStatusLine) {
  std::ostringstream out;
  const Clock::time_point t0{};
  ProgressDisplay::Options options;
  options.terminal = true;
  options.width = 60;
  options.total_runs = 2;
  ProgressDisplay display(out, options, t0);
  display.RunStarted("backend=gloo np=2 servers=1 model=resnet50 repeat 1/3", t0);
  display.Tick(t0 + seconds(65));
  display.RunFinished(true, "", 65, t0 + seconds(65));
  display.Finish();
  const std::string text = out.str();
  // Each redraw goes back to the start of the line and clears it; none is longer than the terminal.
  EXPECT_NE(text.find("\r\033[K[0/2] 1:05 elapsed, estimating what is left | backend=gloo \r"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("\r\033[K[1/2] ok     backend=gloo np=2 servers=1 model=resnet50 repeat 1/3 in 65.0 s (1:05 "
                "elapsed, about 1:05 left)\n"),
      std::string::npos)
      << text;
  size_t start = 0;
  while ((start = text.find("\r\033[K", start)) != std::string::npos) {
    start += 4;
    size_t end = text.find_first_of("\r\n", start);
    std::string line = text.substr(start, end - start);
    if (line.rfind("[0/2]", 0) == 0 || line.rfind("[1/2] 1:05", 0) == 0) {
      EXPECT_LE(line.size(), 59u) << line;
    }
  }
  EXPECT_EQ(text.substr(text.size() - 4), "\r\033[K");  // Finish leaves a clean line
}

TEST(ProgressDisplay, Durations) {
  EXPECT_EQ(ProgressDisplay::FormatDuration(0), "0:00");
  EXPECT_EQ(ProgressDisplay::FormatDuration(59.6), "1:00");
  EXPECT_EQ(ProgressDisplay::FormatDuration(3725), "1:02:05");
}

}  // namespace
}  // namespace hvdrun::lab
