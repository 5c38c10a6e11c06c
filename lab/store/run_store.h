// RunStore: the results directory of one experiment (RESULTS/<name>/), where every run of every
// cell is kept, as docs/lab.md describes:
//
//   experiment.json, experiment.yaml, environment.json    written by `hvdrun-lab run`
//   cells/<cell id>/repeat-<k>/                           one run of a cell:
//       command.json          hvdrun's argv and working directory, written before hvdrun starts
//       stdout.log, stderr.log    hvdrun's own output
//       logs/rank.N/          every rank's output (hvdrun --output-filename)
//       hvdrun/               hvdrun's results: plan.json, ranks/rank-N.json, summary.json, hosts/
//       run.json              the record, written last (a whole file or none)
//
// A run is made in `repeat-<k>.partial/` and, once its run.json is written, exchanged atomically
// with `repeat-<k>/`: a run directory under its final name always holds a complete run, and a run
// interrupted at any point leaves only a `.partial` directory, which does not count and is removed
// when that run is made again. A process must hold Lock() while it changes the store.
#ifndef HVDRUN_LAB_STORE_RUN_STORE_H_
#define HVDRUN_LAB_STORE_RUN_STORE_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/process/file_descriptor.h"
#include "hvdrun/status.h"

namespace hvdrun::lab {

// run.json: how one run of a cell ended.
struct RunRecord {
  bool ok = false;
  std::string error;   // when not ok: one line, what failed
  int exit_code = -1;  // hvdrun's exit code; -1 when it was not started or a signal ended it
  bool timed_out = false;
  double duration_s = 0;
  std::string started_at;            // UTC, ISO 8601
  std::vector<std::string> command;  // hvdrun's arguments (its own path left out): what ran
};

nlohmann::json RunRecordToJson(const RunRecord& record);
// Errors name what is missing or of the wrong type.
StatusOr<RunRecord> RunRecordFromJson(const nlohmann::json& json);

class RunStore {
 public:
  explicit RunStore(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  std::string CellDir(const std::string& cell_id) const;
  std::string RunDir(const std::string& cell_id, int repeat) const;

  // Creates the store's directory (and parents) and locks it against a second hvdrun-lab: the
  // lock holds while the returned descriptor is open, and dies with the process.
  StatusOr<UniqueFd> Lock() const;

  // The record of the complete run, or nullopt when there is none (never made, interrupted).
  std::optional<RunRecord> FindRun(const std::string& cell_id, int repeat) const;

  // Creates an empty partial directory for the run (removing one left by an interrupted run) and
  // returns its path.
  StatusOr<std::string> BeginRun(const std::string& cell_id, int repeat) const;

  // Writes run.json into the partial directory and puts the run in place of any earlier one.
  Status CommitRun(const std::string& cell_id, int repeat, const RunRecord& record) const;

  // Removes the partial directory of an interrupted run.
  void DiscardRun(const std::string& cell_id, int repeat) const;

 private:
  std::string PartialDir(const std::string& cell_id, int repeat) const;

  std::string dir_;
};

// The name of the file each run's record is in.
inline constexpr const char* kRunRecordFile = "run.json";

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_STORE_RUN_STORE_H_
