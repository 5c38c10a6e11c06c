#include "launcher/results/results_writer.h"

#include <cstdio>
#include <filesystem>
#include <vector>

#include "common/atomic_file.h"
#include "common/version.h"
#include "launcher/results/run_summary.h"

namespace hvdrun {

Status WriteResultsFile(const std::string& path, const std::string& contents) {
  Status status = WriteFileAtomically(path, contents);
  if (!status.ok()) return Status::Error("--results: " + status.message());
  return status;
}

nlohmann::json PlanToJson(const RankAssignment& assignment, const LaunchOptions& options,
                          const std::string& job_id) {
  nlohmann::json hosts = nlohmann::json::array();
  for (const HostRanks& host : assignment.hosts()) {
    hosts.push_back({{"host", host.host}, {"ranks", host.ranks}});
  }
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankPlacement& place : assignment.ranks()) {
    ranks.push_back({{"rank", place.rank},
                     {"host", assignment.hosts()[place.host_index].host},
                     {"local_rank", place.local_rank},
                     {"local_size", place.local_size},
                     {"cross_rank", place.cross_rank},
                     {"cross_size", place.cross_size}});
  }
  nlohmann::json exported = nlohmann::json::array();
  for (const std::string& entry : options.exports) exported.push_back(entry.substr(0, entry.find('=')));
  return {{"hvdrun_version", kVersion},
          {"job_id", job_id},
          {"launcher", AgentStartName(options.agent_start)},
          {"slurm_job_id", options.slurm ? nlohmann::json(options.slurm->job_id) : nullptr},
          {"backend", options.backend ? nlohmann::json(std::string(BackendName(*options.backend))) : nullptr},
          {"backend_chosen_by", options.backend_reason},
          {"num_proc", assignment.size()},
          {"command", options.command},
          {"exported_variables", exported},
          {"hosts", hosts},
          {"ranks", ranks}};
}

namespace {

std::string ReportFileName(int rank) { return "rank-" + std::to_string(rank) + ".json"; }

// Removes the reports in RANKS that are not of this job (an earlier, larger job's in the same
// directory, or this job's rank that sent none), so that no rank's report is mistaken for this job's.
Status RemoveOtherReports(const std::filesystem::path& ranks, const std::map<int, std::string>& reports) {
  std::error_code error;
  std::vector<std::filesystem::path> stale;
  for (const auto& entry : std::filesystem::directory_iterator(ranks, error)) {
    const std::string name = entry.path().filename().string();
    // Only rank-N.json: the stall check's rank-N.recorder.json beside them are this job's.
    if (name.size() <= 10 || name.rfind("rank-", 0) != 0 || !name.ends_with(".json")) continue;
    if (name.find_first_not_of("0123456789", 5) != name.size() - 5) continue;
    bool ours = false;
    for (const auto& report : reports) ours = ours || name == ReportFileName(report.first);
    if (!ours) stale.push_back(entry.path());
  }
  for (const std::filesystem::path& path : stale) {
    if (!std::filesystem::remove(path, error) && error) {
      return Status::Error("--results: cannot remove an earlier job's '" + path.string() +
                           "': " + error.message());
    }
  }
  return Status::Ok();
}

}  // namespace

Status WriteResults(const std::string& dir, const nlohmann::json& plan,
                    const std::map<int, std::string>& reports, const nlohmann::json& summary) {
  std::filesystem::path root(dir);
  std::error_code error;
  std::filesystem::create_directories(root / "ranks", error);
  if (error) {
    return Status::Error("--results: cannot create '" + (root / "ranks").string() + "': " + error.message());
  }
  if (Status status = WriteResultsFile((root / "plan.json").string(), plan.dump(2) + "\n"); !status.ok()) {
    return status;
  }
  for (const auto& [rank, report] : reports) {
    std::string path = (root / "ranks" / ReportFileName(rank)).string();
    if (Status status = WriteResultsFile(path, report + "\n"); !status.ok()) return status;
  }
  if (Status status = RemoveOtherReports(root / "ranks", reports); !status.ok()) return status;
  return WriteResultsFile((root / "summary.json").string(), summary.dump(2) + "\n");
}

Status PublishResults(const std::map<int, std::string>& reports, const RankAssignment& assignment,
                      const LaunchOptions& options, const std::string& job_id, int exit_code,
                      const std::vector<JobRound>& rounds, const JobProblem* problem,
                      const nlohmann::json& elastic_plan, const nlohmann::json& elastic_summary) {
  RunSummary summary = SummarizeReports(reports);
  for (const std::string& bad_report : summary.problems) {
    std::fprintf(stderr, "hvdrun: report of %s\n", bad_report.c_str());
  }
  std::fputs(FormatRunSummary(summary).c_str(), stdout);
  std::fflush(stdout);
  if (options.results_dir.empty()) return Status::Ok();
  nlohmann::json summary_json = RunSummaryToJson(summary);
  summary_json["status"] = exit_code == 0 ? "ok" : "failed";
  summary_json["exit_code"] = exit_code;
  summary_json["problem"] = problem != nullptr ? JobProblemToJson(*problem) : nlohmann::json(nullptr);
  summary_json["rounds"] = JobRoundsToJson(rounds);
  nlohmann::json plan = PlanToJson(assignment, options, job_id);
  if (!elastic_plan.is_null()) plan["elastic"] = elastic_plan;
  if (!elastic_summary.is_null()) summary_json["elastic"] = elastic_summary;
  return WriteResults(options.results_dir, plan, reports, summary_json);
}

}  // namespace hvdrun
