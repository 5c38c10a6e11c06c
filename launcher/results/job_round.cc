#include "launcher/results/job_round.h"

namespace hvdrun {

JobRound LaunchRound(const RankAssignment& assignment) {
  JobRound round;
  round.size = assignment.size();
  for (const HostRanks& host : assignment.hosts()) round.hosts.push_back(host.host);
  round.why = "start";
  return round;
}

nlohmann::json JobRoundsToJson(const std::vector<JobRound>& rounds) {
  nlohmann::json json = nlohmann::json::array();
  for (const JobRound& round : rounds) {
    json.push_back({{"round", round.round},
                    {"size", round.size},
                    {"hosts", round.hosts},
                    {"hosts_lost", round.lost},
                    {"hosts_added", round.added},
                    {"why", round.why},
                    {"formed_at_seconds", round.formed_at_s},
                    {"seconds", round.seconds}});
  }
  return json;
}

}  // namespace hvdrun
