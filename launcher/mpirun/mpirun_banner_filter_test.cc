#include "launcher/mpirun/mpirun_banner_filter.h"

#include <gtest/gtest.h>

namespace hvdrun {
namespace {

using Lines = std::vector<std::string>;

const std::string kDashes(74, '-');

// Open MPI 4.1.4's banners, as mpirun printed them when a rank exited with 3, and when one was
// killed by SIGSEGV.
const Lines kAbortBanners = {
    kDashes,
    "Primary job  terminated normally, but 1 process returned",
    "a non-zero exit code. Per user-direction, the job has been aborted.",
    kDashes,
    kDashes,
    "mpirun detected that one or more processes exited with non-zero status, thus causing",
    "the job to be terminated. The first process to do so was:",
    "",
    "  Process name: [[13857,1],1]",
    "  Exit code:    3",
    kDashes};
const Lines kSignalBanner = {
    kDashes,
    "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 11 (Segmentation fault).",
    kDashes};

// Adds every line; returns what was printed at once.
Lines AddAll(MpirunBannerFilter& filter, const Lines& lines) {
  Lines printed;
  for (const std::string& line : lines) {
    Lines now = filter.Add(line);
    printed.insert(printed.end(), now.begin(), now.end());
  }
  return printed;
}

TEST(MpirunBannerFilter, PlainLinesPassAtOnce) {
  MpirunBannerFilter filter;
  EXPECT_EQ(filter.Add("mpirun: Error: unknown option \"--bogus\""),
            Lines{"mpirun: Error: unknown option \"--bogus\""});
  EXPECT_EQ(filter.Add("Type 'mpirun --help' for usage."), Lines{"Type 'mpirun --help' for usage."});
  EXPECT_TRUE(filter.Finish(true).empty());
}

TEST(MpirunBannerFilter, OtherBannersPassWhole) {
  MpirunBannerFilter filter;
  Lines banner = {kDashes, "There are not enough slots available in the system to satisfy the 3", "",
                  kDashes};
  EXPECT_TRUE(filter.Add(banner[0]).empty());
  EXPECT_TRUE(filter.Add(banner[1]).empty());
  EXPECT_TRUE(filter.Add(banner[2]).empty());
  EXPECT_EQ(filter.Add(banner[3]), banner);
  EXPECT_TRUE(filter.Finish(true).empty());
}

TEST(MpirunBannerFilter, BannersThatRestateAFailureAreHeldAndDroppedWhenHvdrunReportsIt) {
  MpirunBannerFilter filter;
  EXPECT_TRUE(AddAll(filter, kAbortBanners).empty());
  EXPECT_TRUE(AddAll(filter, kSignalBanner).empty());
  EXPECT_EQ(filter.Add("after"), Lines{"after"});
  EXPECT_TRUE(filter.Finish(true).empty());
}

TEST(MpirunBannerFilter, HeldBannersArePrintedWhenHvdrunHasNoReport) {
  MpirunBannerFilter filter;
  EXPECT_TRUE(AddAll(filter, kSignalBanner).empty());
  EXPECT_EQ(filter.Finish(false), kSignalBanner);
}

TEST(MpirunBannerFilter, AnUnclosedBannerIsPrintedAtTheEndOrWhenTooLong) {
  MpirunBannerFilter filter;
  EXPECT_TRUE(AddAll(filter, {kDashes, "Primary job  terminated normally, but"}).empty());
  EXPECT_EQ(filter.Finish(true), (Lines{kDashes, "Primary job  terminated normally, but"}));

  Lines endless(MpirunBannerFilter::kMaxBannerLines, "line");
  endless[0] = kDashes;
  Lines printed = AddAll(filter, endless);
  EXPECT_EQ(printed, endless);
}

}  // namespace
}  // namespace hvdrun
