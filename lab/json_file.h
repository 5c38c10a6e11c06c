// ParseJson, ReadJsonFile: the JSON files of a results directory (experiment.json, run.json,
// environment.json, and hvdrun's plan.json, ranks/rank-N.json and hosts/*.json) read back with
// bounds. They are written by hvdrun and hvdrun-lab, but read from a directory anyone may have
// changed, copied or damaged, so every read is bounded: a file over kMaxJsonFileBytes is not read,
// and a document nested deeper than kMaxJsonDepth is refused before it is built (a deeply nested
// value would exhaust the stack of whatever walks it). Errors are one line in hvdrun-lab's words,
// naming the file, the place (line and column) and the limit or what was expected. Pure but for
// the file read; thread-safe.
#ifndef HVDRUN_LAB_JSON_FILE_H_
#define HVDRUN_LAB_JSON_FILE_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "hvdrun/status.h"

namespace hvdrun::lab {

// The largest results file read (a rank's report with every message size and response bin is
// a few hundred KiB).
inline constexpr size_t kMaxJsonFileBytes = size_t{64} << 20;
// Levels of objects and arrays (hvdrun's and hvdrun-lab's files use five at most).
inline constexpr int kMaxJsonDepth = 64;

// `text` as JSON; `label` (the file's path) starts every error: "LABEL:LINE:COLUMN: not valid
// JSON: ...", "LABEL:LINE:COLUMN: nested deeper than 64 levels, the most hvdrun-lab reads".
StatusOr<nlohmann::json> ParseJson(std::string_view text, const std::string& label);

// The file at `path` (ReadWholeFile's errors, at most kMaxJsonFileBytes), parsed by ParseJson.
StatusOr<nlohmann::json> ReadJsonFile(const std::string& path);

// `json` as hvdrun-lab writes every JSON file: indented by 2, ending in a newline. A string that is
// not UTF-8 (a line hvdrun printed from a rank's output, a host's fact) is written with U+FFFD in
// place of each byte that is not, rather than failing the write.
std::string JsonFileText(const nlohmann::json& json);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_JSON_FILE_H_
