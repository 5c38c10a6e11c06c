#include "common/progress/rank_board.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/env_names.h"
#include "common/whole_number.h"

namespace hvdrun::progress {
namespace {

ProgressBoard* OpenRankBoard() {
  const char* path = std::getenv(env::kProgressFile);
  const char* enabled = std::getenv(env::kProgress);
  if (path == nullptr || *path == '\0' || (enabled != nullptr && std::string(enabled) == "0")) return nullptr;
  uint32_t records = kDefaultRecords;
  if (const char* text = std::getenv(env::kProgressRecords); text != nullptr && *text != '\0') {
    const ParsedWholeNumber parsed = ParseWholeNumber(text, 1, kMaxRecords);
    if (!parsed.ok()) {
      std::fprintf(stderr, "libhvdrun: %s=%s: not a whole number of records in 1..%u; using %u\n",
                   env::kProgressRecords, text, kMaxRecords, kDefaultRecords);
    } else {
      records = static_cast<uint32_t>(parsed.value);
    }
  }
  StatusOr<std::unique_ptr<ProgressBoard>> board = ProgressBoard::Create(path, records);
  if (!board.ok()) {
    std::fprintf(stderr, "libhvdrun: %s; this rank's progress is not reported\n",
                 board.status().message().c_str());
    return nullptr;
  }
  return std::move(board).value().release();  // lives as long as the process
}

}  // namespace

ProgressBoard* RankBoard() {
  static ProgressBoard* const board = OpenRankBoard();
  return board;
}

}  // namespace hvdrun::progress
