// JobRound: one round of a job as --results records it in summary.json's "rounds"
// (docs/results.md). A job that is not elastic runs in one round, round 0, its launch; an elastic
// job adds a round each time it re-forms (launcher/elastic/elastic_driver.h). Pure.
#ifndef HVDRUN_LAUNCHER_RESULTS_JOB_ROUND_H_
#define HVDRUN_LAUNCHER_RESULTS_JOB_ROUND_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/placement/rank_assignment.h"

namespace hvdrun {

struct JobRound {
  int round = 0;
  int size = 0;                    // its ranks
  std::vector<std::string> hosts;  // its hosts, in rank order
  std::vector<std::string> lost;   // hosts of the round before that it does not hold
  std::vector<std::string> added;  // hosts it holds that the round before did not
  std::string why;                 // "start" for round 0; else what made the job re-form, in words
  double formed_at_s = 0;          // when it was formed, in seconds after round 0 was
  double seconds = 0;              // how long the re-formation took: from its first cause to its keys
};

// Round 0 of a job launched as `assignment` places its ranks: the one round of a job that is not
// elastic.
JobRound LaunchRound(const RankAssignment& assignment);

// summary.json's "rounds": [{"round", "size", "hosts", "hosts_lost", "hosts_added", "why",
// "formed_at_seconds", "seconds"}], in the order given.
nlohmann::json JobRoundsToJson(const std::vector<JobRound>& rounds);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_RESULTS_JOB_ROUND_H_
