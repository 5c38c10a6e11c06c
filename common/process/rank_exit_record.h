// The records that `hvdrun-agent --mpi-rank` leaves in the job's key-value store for its rank, so
// that hvdrun learns under mpirun what the agent protocol tells it otherwise: which pid the rank
// has, and how it ended. docs/protocol.md, "Rank records under mpirun", is the reference.
//
//   hvdrun/started/<rank>   "PID PGID": the rank's pid and its process group, once it runs
//   hvdrun/exit/<rank>      EncodeRankExitRecord's bytes, once it has ended or could not start
//   hvdrun/master_addr      with --network-interface: rank 0's host's address on the chosen
//                           interface, which every rank gets as MASTER_ADDR
#ifndef HVDRUN_COMMON_PROCESS_RANK_EXIT_RECORD_H_
#define HVDRUN_COMMON_PROCESS_RANK_EXIT_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/protocol/agent_protocol.h"
#include "hvdrun/status.h"

namespace hvdrun {

inline constexpr std::string_view kRankStartedKeyPrefix = "hvdrun/started/";
inline constexpr std::string_view kRankExitKeyPrefix = "hvdrun/exit/";
inline constexpr const char* kMasterAddrKey = "hvdrun/master_addr";

std::string RankStartedKey(int rank);
std::string RankExitKey(int rank);
// The rank that a record's key names after `prefix` ("hvdrun/exit/3" -> 3); -1 when the key is not
// `prefix` followed by a rank.
int RankOfRecordKey(std::string_view key, std::string_view prefix);

struct RankStartedRecord {
  int32_t pid = 0;
  // The process group the rank runs in, with its agent and whatever it starts: SIGKILL to it
  // ends them all.
  int32_t process_group = 0;
  bool operator==(const RankStartedRecord&) const = default;
};

std::string EncodeRankStartedRecord(const RankStartedRecord& record);
// Fails for text that is not two positive decimal numbers separated by one space.
StatusOr<RankStartedRecord> DecodeRankStartedRecord(std::string_view text);

struct RankExitRecord {
  // rank, exit code or signal, and the start failure, as an agent reports them in RankExited.
  protocol::RankExited exit;
  int32_t pid = 0;  // 0 when the program never started
  // The agent had been told to stop (SIGTERM, SIGINT or SIGHUP from mpirun, or mpirun's death)
  // before the rank ended: an end by that signal or SIGKILL is then the job's stop, not a failure.
  bool stop_requested = false;
  // When the agent saw the rank end: nanoseconds since the Unix epoch (CLOCK_REALTIME), so that
  // ends on different hosts can be ordered as far as their clocks agree.
  uint64_t end_unix_ns = 0;
  bool operator==(const RankExitRecord&) const = default;
};

std::string EncodeRankExitRecord(const RankExitRecord& record);

// Fails, saying why, for bytes that are not exactly one record of this version.
StatusOr<RankExitRecord> DecodeRankExitRecord(std::string_view bytes);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PROCESS_RANK_EXIT_RECORD_H_
