#include "common/process/rank_exit_record.h"

#include <limits>

#include "common/protocol/byte_codec.h"
#include "common/whole_number.h"

namespace hvdrun {
namespace {

// First byte of a record; a change of its fields changes it.
constexpr uint8_t kRecordVersion = 1;

}  // namespace

std::string RankStartedKey(int rank) { return std::string(kRankStartedKeyPrefix) + std::to_string(rank); }

std::string RankExitKey(int rank) { return std::string(kRankExitKeyPrefix) + std::to_string(rank); }

std::string EncodeRankStartedRecord(const RankStartedRecord& record) {
  return std::to_string(record.pid) + " " + std::to_string(record.process_group);
}

int RankOfRecordKey(std::string_view key, std::string_view prefix) {
  if (!key.starts_with(prefix)) return -1;
  const ParsedWholeNumber rank =
      ParseWholeNumber(key.substr(prefix.size()), 0, std::numeric_limits<int>::max());
  return rank.ok() ? static_cast<int>(rank.value) : -1;
}

StatusOr<RankStartedRecord> DecodeRankStartedRecord(std::string_view text) {
  const size_t space = text.find(' ');
  constexpr int64_t kMaxId = std::numeric_limits<int32_t>::max();
  const ParsedWholeNumber pid = ParseWholeNumber(text.substr(0, space), 1, kMaxId);
  const ParsedWholeNumber group = space == std::string_view::npos
                                      ? ParsedWholeNumber{}
                                      : ParseWholeNumber(text.substr(space + 1), 1, kMaxId);
  if (space == std::string_view::npos || !pid.ok() || !group.ok()) {
    return Status::Error("malformed start record of " + std::to_string(text.size()) + " bytes");
  }
  return RankStartedRecord{static_cast<int32_t>(pid.value), static_cast<int32_t>(group.value)};
}

std::string EncodeRankExitRecord(const RankExitRecord& record) {
  ByteWriter w;
  w.U8(kRecordVersion);
  w.I32(record.exit.rank);
  w.I32(record.pid);
  w.I32(record.exit.exit_code);
  w.I32(record.exit.signal);
  w.U8(static_cast<uint8_t>(record.exit.spawn_error));
  w.Bytes(record.exit.error);
  w.U8(record.stop_requested ? 1 : 0);
  w.U64(record.end_unix_ns);
  return w.Take();
}

StatusOr<RankExitRecord> DecodeRankExitRecord(std::string_view bytes) {
  ByteReader r(bytes);
  RankExitRecord record;
  uint8_t version = 0;
  uint8_t spawn_error = 0;
  if (!r.U8(&version)) return Status::Error("empty exit record");
  if (version != kRecordVersion) {
    return Status::Error("exit record of version " + std::to_string(version) + ", expected " +
                         std::to_string(kRecordVersion) + " (install the same hvdrun on every host)");
  }
  if (!r.I32(&record.exit.rank) || !r.I32(&record.pid) || !r.I32(&record.exit.exit_code) ||
      !r.I32(&record.exit.signal) || !r.U8(&spawn_error) || !r.Bytes(&record.exit.error) ||
      !r.Bool(&record.stop_requested) || !r.U64(&record.end_unix_ns) || !r.AtEnd()) {
    return Status::Error("malformed exit record of " + std::to_string(bytes.size()) + " bytes");
  }
  if (spawn_error > static_cast<uint8_t>(protocol::SpawnError::kOther)) {
    return Status::Error("exit record with unknown start failure " + std::to_string(spawn_error));
  }
  record.exit.spawn_error = static_cast<protocol::SpawnError>(spawn_error);
  return record;
}

}  // namespace hvdrun
