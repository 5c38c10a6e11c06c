// FlightRecorders: the ranks' flight recorders (each rank's last collectives, as its agent sends
// them with RankProgress), gathered by hvdrun on a stall warning, a failure or SIGUSR1: where the
// ranks diverge, their last collectives in words, and DIR/ranks/rank-N.recorder.json. Not
// thread-safe.
#ifndef HVDRUN_LAUNCHER_STALL_FLIGHT_RECORDERS_H_
#define HVDRUN_LAUNCHER_STALL_FLIGHT_RECORDERS_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/protocol/agent_protocol.h"
#include "hvdrun/status.h"

namespace hvdrun {

using RankRecords = std::map<int, std::vector<protocol::FlightRecord>>;  // rank -> records, oldest first

// Where the ranks' recent collectives differ: the first sequence number, in the span every
// recorder covers, at which the ranks' names differ or some rank has none
// ("the ranks diverge at collective #813: rank 0 'grad.fc', rank 1 has not submitted it (its last
// is #812 'grad.conv2')"); "the ranks' last collectives agree (up to #N)" when they do not; "" for
// fewer than two recorders.
std::string DescribeDivergence(const RankRecords& records);

// Up to `count` of a rank's last collectives, one indented line each:
// "    #812 allreduce 'grad.conv2' 4 MiB: done".
std::string FormatLastCollectives(const std::vector<protocol::FlightRecord>& records, size_t count);

// "submitted", "negotiated", "in backend", "done", "failed".
const char* PhaseName(protocol::CollectivePhase phase);

// rank-N.recorder.json's contents: {"rank": N, "collectives": [{sequence, name, op, bytes,
// process_set, phase, submitted_unix_ms, ...}]}.
nlohmann::json RecorderToJson(int rank, const std::vector<protocol::FlightRecord>& records);

// Writes DIR/ranks/rank-N.recorder.json for every rank of `records`, each atomically; the error
// names the file.
Status WriteRecorderFiles(const std::string& results_dir, const RankRecords& records);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_STALL_FLIGHT_RECORDERS_H_
