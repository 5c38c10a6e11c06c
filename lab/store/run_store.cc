#include "lab/store/run_store.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/atomic_file.h"
#include "lab/json_fields.h"
#include "lab/json_file.h"

namespace hvdrun::lab {

namespace fs = std::filesystem;

namespace {

// The longest run.json's duration may say: far beyond any timeout (a week), so a damaged record
// is not shown as a run of ages.
constexpr double kMaxRunSeconds = 1e9;

}  // namespace

nlohmann::json RunRecordToJson(const RunRecord& record) {
  return {{"status", record.ok ? "ok" : "failed"},
          {"error", record.error},
          {"exit_code", record.exit_code},
          {"timed_out", record.timed_out},
          {"duration_s", record.duration_s},
          {"started_at", record.started_at},
          {"command", record.command}};
}

StatusOr<RunRecord> RunRecordFromJson(const nlohmann::json& json) {
  auto missing = [](const char* key, const char* type) {
    return Status::Error(std::string("\"") + key + "\" is missing or not " + type);
  };
  if (!json.is_object()) return Status::Error("not a JSON object");
  RunRecord record;
  auto status = json.find("status");
  if (status == json.end() || !status->is_string() || (*status != "ok" && *status != "failed")) {
    return missing("status", "\"ok\" or \"failed\"");
  }
  record.ok = *status == "ok";
  auto string_member = [&](const char* key, std::string& out) {
    auto it = json.find(key);
    if (it == json.end() || !it->is_string()) return false;
    out = it->get<std::string>();
    return true;
  };
  if (!string_member("error", record.error)) return missing("error", "a string");
  if (!string_member("started_at", record.started_at)) return missing("started_at", "a string");
  auto exit_code = json.find("exit_code");
  std::optional<int64_t> code = exit_code == json.end() ? std::nullopt : JsonWholeNumber(*exit_code, -1, 255);
  if (!code) return missing("exit_code", "a whole number from -1 to 255");
  record.exit_code = static_cast<int>(*code);
  auto timed_out = json.find("timed_out");
  if (timed_out == json.end() || !timed_out->is_boolean()) return missing("timed_out", "true or false");
  record.timed_out = timed_out->get<bool>();
  auto duration = json.find("duration_s");
  if (duration == json.end() || !duration->is_number() || !(duration->get<double>() >= 0) ||
      duration->get<double>() > kMaxRunSeconds) {
    return missing("duration_s", "a number of seconds from 0 to 1e+09");
  }
  record.duration_s = duration->get<double>();
  auto command = json.find("command");
  if (command == json.end() || !command->is_array()) return missing("command", "a list");
  for (const nlohmann::json& arg : *command) {
    if (!arg.is_string()) return missing("command", "a list of strings");
    record.command.push_back(arg.get<std::string>());
  }
  return record;
}

std::string RunStore::CellDir(const std::string& cell_id) const { return dir_ + "/cells/" + cell_id; }

std::string RunStore::RunDir(const std::string& cell_id, int repeat) const {
  return CellDir(cell_id) + "/repeat-" + std::to_string(repeat);
}

std::string RunStore::PartialDir(const std::string& cell_id, int repeat) const {
  return RunDir(cell_id, repeat) + ".partial";
}

StatusOr<UniqueFd> RunStore::Lock() const {
  std::error_code error;
  fs::create_directories(dir_, error);
  if (error) return Status::Error("cannot create '" + dir_ + "': " + error.message());
  std::string path = dir_ + "/.lock";
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!fd.valid()) return Status::Error("cannot open '" + path + "': " + std::strerror(errno));
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return Status::Error(dir_ + ": another hvdrun-lab is running this experiment (it holds " + path + ")");
    }
    return Status::Error("cannot lock '" + path + "': " + std::strerror(errno));
  }
  return fd;
}

std::optional<RunRecord> RunStore::FindRun(const std::string& cell_id, int repeat) const {
  StatusOr<nlohmann::json> json = ReadJsonFile(RunDir(cell_id, repeat) + "/" + kRunRecordFile);
  if (!json.ok()) return std::nullopt;
  StatusOr<RunRecord> record = RunRecordFromJson(json.value());
  if (!record.ok()) return std::nullopt;
  return record.value();
}

StatusOr<std::string> RunStore::BeginRun(const std::string& cell_id, int repeat) const {
  std::string partial = PartialDir(cell_id, repeat);
  std::error_code error;
  fs::remove_all(partial, error);
  if (error) return Status::Error("cannot remove '" + partial + "': " + error.message());
  fs::create_directories(partial, error);
  if (error) return Status::Error("cannot create '" + partial + "': " + error.message());
  return partial;
}

Status RunStore::CommitRun(const std::string& cell_id, int repeat, const RunRecord& record) const {
  std::string partial = PartialDir(cell_id, repeat);
  std::string final_dir = RunDir(cell_id, repeat);
  if (Status status =
          WriteFileAtomically(partial + "/" + kRunRecordFile, JsonFileText(RunRecordToJson(record)));
      !status.ok()) {
    return status;
  }
  // Swapped, when an earlier run is there, so that a complete run is under the name at every instant;
  // either way the run is in place for good once the cell's directory is synced.
  if (::renameat2(AT_FDCWD, partial.c_str(), AT_FDCWD, final_dir.c_str(), RENAME_EXCHANGE) == 0) {
    std::error_code ignored;
    fs::remove_all(partial, ignored);
    return SyncDirectory(CellDir(cell_id));
  }
  if (errno != ENOENT) return Status::Error("cannot replace '" + final_dir + "': " + std::strerror(errno));
  if (::rename(partial.c_str(), final_dir.c_str()) != 0) {
    return Status::Error("cannot rename '" + partial + "' to '" + final_dir + "': " + std::strerror(errno));
  }
  return SyncDirectory(CellDir(cell_id));
}

void RunStore::DiscardRun(const std::string& cell_id, int repeat) const {
  std::error_code ignored;
  fs::remove_all(PartialDir(cell_id, repeat), ignored);
}

}  // namespace hvdrun::lab
