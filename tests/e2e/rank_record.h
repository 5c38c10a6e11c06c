// What `hvdrun-test-rank job` tells a test about its processes: one record per rank, written to
// DIR/rank.R.pids once the rank is set up. hvdrun-test-rank writes these records and the tests read
// them, so both share this file.
#ifndef HVDRUN_TESTS_E2E_RANK_RECORD_H_
#define HVDRUN_TESTS_E2E_RANK_RECORD_H_

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace hvdrun::e2e {

struct RankRecord {
  int rank = -1;
  pid_t pid = 0;
  // The rank's parent: the hvdrun-agent that started it.
  pid_t agent_pid = 0;
  // A child the rank started, in the rank's process group; 0 when it started none.
  pid_t grandchild_pid = 0;
};

std::string RankRecordPath(const std::string& dir, int rank);

// Writes `record` so that a reader never sees it half written. Returns false on failure.
bool WriteRankRecord(const std::string& dir, const RankRecord& record);

// The record of `rank` in `dir`, or nullopt while it does not exist.
std::optional<RankRecord> ReadRankRecord(const std::string& dir, int rank);

// Waits until `dir` holds the records of ranks 0..num_ranks-1 and returns them by rank; nullopt
// when some are still missing after `timeout`.
std::optional<std::vector<RankRecord>> WaitForRankRecords(const std::string& dir, int num_ranks,
                                                          std::chrono::milliseconds timeout);

// Every process that `records` name: the ranks, their agents and their grandchildren.
std::vector<pid_t> ReportedPids(const std::vector<RankRecord>& records);

// Where a test signals `hvdrun-test-rank job --wait-go` that the failing rank may fail now.
std::string GoFilePath(const std::string& dir);

}  // namespace hvdrun::e2e

#endif  // HVDRUN_TESTS_E2E_RANK_RECORD_H_
