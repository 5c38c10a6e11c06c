// ElasticOptions: how an elastic job (docs/elastic.md) may change while it runs, as horovodrun's
// elastic flags give it (launcher/command_line/elastic_flags.h resolves them).
#ifndef HVDRUN_LAUNCHER_ELASTIC_ELASTIC_OPTIONS_H_
#define HVDRUN_LAUNCHER_ELASTIC_ELASTIC_OPTIONS_H_

#include <optional>
#include <string>
#include <vector>

namespace hvdrun {

// A blacklisted host's cooldown bounds, in seconds (--blacklist-cooldown-range MIN MAX).
struct CooldownRange {
  int min_s = 0;
  int max_s = 0;
};

// The hosts a discovery script may give: inside a Slurm allocation whose agents start through srun,
// its nodes (srun reaches no other). A host outside them is left out with a warning.
struct AllowedHosts {
  std::vector<std::string> hosts;  // empty: any host
  std::string where;  // what holds them, for the warning: "Slurm job 12 (SLURM_JOB_NODELIST='n[1-3]')"
};

struct ElasticOptions {
  // --min-np: the job goes on while at least this many slots run (default: -np).
  int min_np = 0;
  // --max-np: at most this many ranks in a round; 0: no bound (horovodrun's default).
  int max_np = 0;
  // --host-discovery-script: run every second, prints `host[:slots]` lines; empty: the hosts of
  // -H/--hostfile (or the Slurm allocation), which can only be lost.
  std::string discovery_script;
  // The hosts the script may give (the Slurm allocation's nodes under --launcher slurm).
  AllowedHosts allowed;
  // --slots-per-host: slots of a discovered host whose line gives none.
  int slots_per_host = 1;
  // --elastic-timeout (else HOROVOD_ELASTIC_TIMEOUT, else 600): how long the job waits below
  // min-np slots, and how long a rank waits for its next round.
  int timeout_s = 600;
  // --reset-limit: the most re-formations; nullopt: no limit.
  std::optional<int> reset_limit;
  // --blacklist-cooldown-range; nullopt: a failed host is out for good.
  std::optional<CooldownRange> cooldown;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_ELASTIC_ELASTIC_OPTIONS_H_
