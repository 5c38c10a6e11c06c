// What hvdrun-test-collectives (tests/e2e/collective_rank.cc) prints, as the end-to-end tests check
// it: each rank's "rank R of N: checked C results, F failed" line, under hvdrun's "[R]<stdout>:"
// prefix.
#ifndef HVDRUN_TESTS_E2E_COLLECTIVE_RANK_OUTPUT_H_
#define HVDRUN_TESTS_E2E_COLLECTIVE_RANK_OUTPUT_H_

#include <gtest/gtest.h>

#include <string>

namespace hvdrun::e2e {

// Success when every rank of `ranks` printed its "checked" line into `output` (a job's stdout) and
// the output says "results, 0 failed"; otherwise a failure that names the first line missing.
inline testing::AssertionResult EveryRankCheckedItsResults(const std::string& output, int ranks) {
  for (int rank = 0; rank < ranks; ++rank) {
    const std::string line = "[" + std::to_string(rank) + "]<stdout>:rank " + std::to_string(rank) + " of " +
                             std::to_string(ranks) + ": checked ";
    if (output.find(line) == std::string::npos) return testing::AssertionFailure() << "no line " << line;
  }
  if (output.find("results, 0 failed") == std::string::npos) {
    return testing::AssertionFailure() << "no \"results, 0 failed\"";
  }
  return testing::AssertionSuccess();
}

}  // namespace hvdrun::e2e

#endif  // HVDRUN_TESTS_E2E_COLLECTIVE_RANK_OUTPUT_H_
