#include "launcher/stall/flight_recorders.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>

#include "common/error_text.h"
#include "launcher/results/results_writer.h"
#include "launcher/stall/rank_state.h"

namespace hvdrun {
namespace {

const protocol::FlightRecord* Find(const std::vector<protocol::FlightRecord>& records, uint64_t sequence) {
  for (const protocol::FlightRecord& record : records) {
    if (record.sequence == sequence) return &record;
  }
  return nullptr;
}

// What rank's recorder says of collective `sequence`.
std::string AtSequence(int rank, const std::vector<protocol::FlightRecord>& records, uint64_t sequence) {
  std::string text = "rank " + std::to_string(rank) + " ";
  if (const protocol::FlightRecord* record = Find(records, sequence)) {
    return text + QuotedOneLine(record->name);
  }
  text += "has not submitted it";
  if (!records.empty()) {
    text += " (its last is #" + std::to_string(records.back().sequence) + " " +
            QuotedOneLine(records.back().name) + ")";
  }
  return text;
}

}  // namespace

const char* PhaseName(protocol::CollectivePhase phase) {
  switch (phase) {
    case protocol::CollectivePhase::kSubmitted:
      return "submitted";
    case protocol::CollectivePhase::kNegotiated:
      return "negotiated";
    case protocol::CollectivePhase::kInBackend:
      return "in backend";
    case protocol::CollectivePhase::kDone:
      return "done";
    case protocol::CollectivePhase::kFailed:
      return "failed";
  }
  return "unknown";
}

std::string DescribeDivergence(const RankRecords& records) {
  if (records.size() < 2) return "";
  uint64_t first = 0;  // the span every recorder covers starts at the latest first record
  uint64_t last = 0;   // and runs to the furthest record of any rank
  for (const auto& [rank, list] : records) {
    if (list.empty()) continue;
    first = std::max(first, list.front().sequence);
    last = std::max(last, list.back().sequence);
  }
  for (uint64_t sequence = first; sequence <= last && sequence > 0; ++sequence) {
    std::optional<std::string> name;
    bool differ = false;
    for (const auto& [rank, list] : records) {
      const protocol::FlightRecord* record = Find(list, sequence);
      if (record == nullptr || (name && *name != record->name)) differ = true;
      if (record != nullptr && !name) name = record->name;
    }
    if (!differ) continue;
    std::string text = "the ranks diverge at collective #" + std::to_string(sequence) + ":";
    for (const auto& [rank, list] : records) {
      text += (text.back() == ':' ? " " : ", ") + AtSequence(rank, list, sequence);
    }
    return text;
  }
  return "the ranks' last collectives agree (up to #" + std::to_string(last) + ")";
}

std::string FormatLastCollectives(const std::vector<protocol::FlightRecord>& records, size_t count) {
  std::string text;
  const size_t begin = records.size() > count ? records.size() - count : 0;
  for (size_t i = begin; i < records.size(); ++i) {
    const protocol::FlightRecord& record = records[i];
    text += "    #";  // appended piece by piece: GCC 12's -Wrestrict misreads a chain at -O3
    text += std::to_string(record.sequence);
    text += ' ';
    if (!record.op.empty()) text += record.op + " ";
    text += QuotedOneLine(record.name);
    if (record.bytes > 0) {
      text += ' ';
      text += SizeText(record.bytes);
    }
    text += ": ";
    text += PhaseName(record.phase);
    text += '\n';
  }
  return text;
}

nlohmann::json RecorderToJson(int rank, const std::vector<protocol::FlightRecord>& records) {
  nlohmann::json collectives = nlohmann::json::array();
  for (const protocol::FlightRecord& record : records) {
    collectives.push_back({{"sequence", record.sequence},
                           {"name", record.name},
                           {"op", record.op},
                           {"bytes", record.bytes},
                           {"process_set", record.process_set},
                           {"phase", PhaseName(record.phase)},
                           {"submitted_unix_ms", record.submitted_unix_ms},
                           {"negotiated_unix_ms", record.negotiated_unix_ms},
                           {"backend_unix_ms", record.backend_unix_ms},
                           {"done_unix_ms", record.done_unix_ms}});
  }
  return {{"rank", rank}, {"collectives", collectives}};
}

Status WriteRecorderFiles(const std::string& results_dir, const RankRecords& records) {
  const std::filesystem::path ranks = std::filesystem::path(results_dir) / "ranks";
  std::error_code error;
  std::filesystem::create_directories(ranks, error);
  if (error) return Status::Error("--results: cannot create '" + ranks.string() + "': " + error.message());
  for (const auto& [rank, list] : records) {
    const std::string path = (ranks / ("rank-" + std::to_string(rank) + ".recorder.json")).string();
    if (Status status = WriteResultsFile(path, RecorderToJson(rank, list).dump(2) + "\n"); !status.ok()) {
      return status;
    }
  }
  return Status::Ok();
}

}  // namespace hvdrun
