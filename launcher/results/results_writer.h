// The results directory of one run (--results DIR), as docs/results.md describes it:
//   DIR/plan.json           hosts, ranks and their placement, backend, command, job id
//   DIR/ranks/rank-N.json   each rank's report, as the rank sent it (an earlier job's removed)
//   DIR/summary.json        the figures aggregated over ranks (launcher/results/run_summary.h)
// Every file is written whole or not at all (common/atomic_file.h), so a reader never sees half a
// file. The job secret and the values of -x variables are never written.
#ifndef HVDRUN_LAUNCHER_RESULTS_RESULTS_WRITER_H_
#define HVDRUN_LAUNCHER_RESULTS_RESULTS_WRITER_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "common/placement/rank_assignment.h"
#include "hvdrun/status.h"
#include "launcher/launch_options.h"
#include "launcher/results/job_problem.h"
#include "launcher/results/job_round.h"

namespace hvdrun {

// Writes one file of the results directory (common/atomic_file.h); the error starts "--results: ".
Status WriteResultsFile(const std::string& path, const std::string& contents);

// plan.json's contents.
nlohmann::json PlanToJson(const RankAssignment& assignment, const LaunchOptions& options,
                          const std::string& job_id);

// Creates DIR (and DIR/ranks) and writes the three kinds of file. Errors name the file.
Status WriteResults(const std::string& dir, const nlohmann::json& plan,
                    const std::map<int, std::string>& reports, const nlohmann::json& summary);

// The end of every job: prints the summary of the ranks' reports (and a line per report that
// makes no sense) and, with --results, writes the results directory, its summary.json saying how
// the job ended (`exit_code`: hvdrun's; "status" "ok" for 0, else "failed"), so that a failed job's
// summary never reads as a good one's, and its "problem" (launcher/results/job_problem.h; null for
// none) what went wrong, and its "rounds" the job's `rounds` (launcher/results/job_round.h: round 0
// alone for a job that is not elastic, none for a job whose ranks were not started). The error
// names the file.
// An elastic job's `elastic` objects (launcher/elastic/elastic_driver.h), one for plan.json and one for
// summary.json, are added to them when not null.
Status PublishResults(const std::map<int, std::string>& reports, const RankAssignment& assignment,
                      const LaunchOptions& options, const std::string& job_id, int exit_code,
                      const std::vector<JobRound>& rounds, const JobProblem* problem = nullptr,
                      const nlohmann::json& elastic_plan = nullptr,
                      const nlohmann::json& elastic_summary = nullptr);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_RESULTS_RESULTS_WRITER_H_
