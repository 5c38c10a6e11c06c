#include "tests/e2e/rank_record.h"

#include <fstream>
#include <thread>

#include "common/atomic_file.h"

namespace hvdrun::e2e {

std::string RankRecordPath(const std::string& dir, int rank) {
  return dir + "/rank." + std::to_string(rank) + ".pids";
}

bool WriteRankRecord(const std::string& dir, const RankRecord& record) {
  const std::string text = std::to_string(record.rank) + " " + std::to_string(record.pid) + " " +
                           std::to_string(record.agent_pid) + " " + std::to_string(record.grandchild_pid) +
                           "\n";
  return WriteFileAtomically(RankRecordPath(dir, record.rank), text).ok();
}

std::optional<RankRecord> ReadRankRecord(const std::string& dir, int rank) {
  std::ifstream in(RankRecordPath(dir, rank));
  RankRecord record;
  if (!(in >> record.rank >> record.pid >> record.agent_pid >> record.grandchild_pid)) return std::nullopt;
  return record;
}

std::optional<std::vector<RankRecord>> WaitForRankRecords(const std::string& dir, int num_ranks,
                                                          std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::vector<RankRecord> records;
    for (int rank = 0; rank < num_ranks; ++rank) {
      std::optional<RankRecord> record = ReadRankRecord(dir, rank);
      if (!record) break;
      records.push_back(*record);
    }
    if (static_cast<int>(records.size()) == num_ranks) return records;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::vector<pid_t> ReportedPids(const std::vector<RankRecord>& records) {
  std::vector<pid_t> pids;
  for (const RankRecord& record : records) {
    for (pid_t pid : {record.pid, record.agent_pid, record.grandchild_pid}) {
      if (pid > 0) pids.push_back(pid);
    }
  }
  return pids;
}

std::string GoFilePath(const std::string& dir) { return dir + "/go"; }

}  // namespace hvdrun::e2e
