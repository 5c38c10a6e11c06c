#include "launcher/results_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/file_descriptor.h"
#include "common/version.h"
#include "launcher/run_summary.h"

namespace hvdrun {

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  std::string temporary = path + ".tmp." + std::to_string(::getpid());
  auto fail = [&](const std::string& what) {
    std::string message = "--results: cannot " + what + " '" + path + "': " + std::strerror(errno);
    ::unlink(temporary.c_str());
    return Status::Error(message);
  };
  UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return fail("write");
  if (!WriteAll(fd.get(), contents) || ::fsync(fd.get()) != 0) return fail("write");
  fd.Reset();
  if (::rename(temporary.c_str(), path.c_str()) != 0) return fail("rename into");
  return Status::Ok();
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
          {"backend", options.backend ? nlohmann::json(std::string(BackendName(*options.backend))) : nullptr},
          {"num_proc", assignment.size()},
          {"command", options.command},
          {"exported_variables", exported},
          {"hosts", hosts},
          {"ranks", ranks}};
}

Status WriteResults(const std::string& dir, const nlohmann::json& plan,
                    const std::map<int, std::string>& reports, const nlohmann::json& summary) {
  std::filesystem::path root(dir);
  std::error_code error;
  std::filesystem::create_directories(root / "ranks", error);
  if (error) {
    return Status::Error("--results: cannot create '" + (root / "ranks").string() + "': " + error.message());
  }
  if (Status status = WriteFileAtomically((root / "plan.json").string(), plan.dump(2) + "\n"); !status.ok()) {
    return status;
  }
  for (const auto& [rank, report] : reports) {
    std::string path = (root / "ranks" / ("rank-" + std::to_string(rank) + ".json")).string();
    if (Status status = WriteFileAtomically(path, report + "\n"); !status.ok()) return status;
  }
  return WriteFileAtomically((root / "summary.json").string(), summary.dump(2) + "\n");
}

Status PublishResults(const std::map<int, std::string>& reports, const RankAssignment& assignment,
                      const LaunchOptions& options, const std::string& job_id) {
  RunSummary summary = SummarizeReports(reports);
  for (const std::string& problem : summary.problems) {
    std::fprintf(stderr, "hvdrun: report of %s\n", problem.c_str());
  }
  std::fputs(FormatRunSummary(summary).c_str(), stdout);
  std::fflush(stdout);
  if (options.results_dir.empty()) return Status::Ok();
  return WriteResults(options.results_dir, PlanToJson(assignment, options, job_id), reports,
                      RunSummaryToJson(summary));
}

}  // namespace hvdrun
