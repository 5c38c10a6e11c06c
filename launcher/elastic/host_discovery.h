// Host discovery of an elastic job (--host-discovery-script, docs/elastic.md): the script is a
// program run as given (argv [FILE], no shell; a name without '/' is looked up in PATH, as a shell
// would), every second, with hvdrun's environment; what it prints on stdout, one `host[:slots]`
// per line (`[user@]host[:slots]` as -H takes one entry, IPv6 in brackets), is the job's hosts.
// A line without `:slots` gets --slots-per-host; blank lines are skipped; a host named twice gets
// the sum of its slots.
//
// A run that cannot start, exits non-zero, is killed, takes longer than kDiscoveryTimeout or
// prints a line that is not a host is a problem: one warning line naming the script and the
// problem (the same problem again is not repeated), and the hosts stay the last good list. A good
// list naming hosts outside AllowedHosts (elastic_options.h) is taken without them, with one
// warning naming them (again only when they change).
#ifndef HVDRUN_LAUNCHER_ELASTIC_HOST_DISCOVERY_H_
#define HVDRUN_LAUNCHER_ELASTIC_HOST_DISCOVERY_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/placement/host_spec.h"
#include "hvdrun/status.h"
#include "launcher/elastic/elastic_options.h"

namespace hvdrun {

inline constexpr std::chrono::milliseconds kDiscoveryPeriod{1000};
inline constexpr std::chrono::milliseconds kDiscoveryTimeout{10000};

// The hosts in `output`, or the first bad line: "line N: 'TEXT': WHY".
StatusOr<std::vector<HostSlots>> ParseDiscoveredHosts(const std::string& output, int slots_per_host);

// Runs `script` once (waiting at most `timeout`) and parses its output; an error is one line
// naming the script: "host discovery script './hosts.sh': 'hosts.sh' failed: exit code 1".
StatusOr<std::vector<HostSlots>> DiscoverHosts(const std::string& script, int slots_per_host,
                                               std::chrono::milliseconds timeout = kDiscoveryTimeout);

// `hosts` less those `allowed` does not hold; `warning` becomes one line naming those left out and
// `script` ("" when none was).
std::vector<HostSlots> KeepAllowedHosts(std::vector<HostSlots> hosts, const AllowedHosts& allowed,
                                        const std::string& script, std::string* warning);

// Runs the script every `period` on a thread of its own, from Start() until destroyed. Thread-safe:
// the job's thread calls TakeChange() and TakeWarnings() while the discovery thread runs.
class HostDiscovery {
 public:
  // `first`: the hosts the job started with (the last good list until a run gives another);
  // `allowed`: the hosts a run may give.
  HostDiscovery(std::string script, int slots_per_host, std::vector<HostSlots> first,
                AllowedHosts allowed = {}, std::chrono::milliseconds period = kDiscoveryPeriod,
                std::chrono::milliseconds timeout = kDiscoveryTimeout);
  // Stops the thread; a script still running is killed with its process group.
  ~HostDiscovery();
  HostDiscovery(const HostDiscovery&) = delete;
  HostDiscovery& operator=(const HostDiscovery&) = delete;

  // Starts the thread. Call with the job's signals already blocked (the thread inherits them).
  void Start();
  // The newest good host list, when it differs from the one the last call returned (or `first`).
  std::optional<std::vector<HostSlots>> TakeChange();
  // The warnings since the last call, one line each ("hvdrun: " not included).
  std::vector<std::string> TakeWarnings();
  // Good runs so far (tests wait on it).
  uint64_t runs() const;

 private:
  void Loop();

  const std::string script_;
  const int slots_per_host_;
  const AllowedHosts allowed_;
  const std::chrono::milliseconds period_;
  const std::chrono::milliseconds timeout_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;              // GUARDED_BY(mutex_)
  std::vector<HostSlots> hosts_;       // GUARDED_BY(mutex_): the newest good list
  std::vector<HostSlots> taken_;       // GUARDED_BY(mutex_): what TakeChange returned last
  std::vector<std::string> warnings_;  // GUARDED_BY(mutex_)
  std::string last_problem_;           // GUARDED_BY(mutex_): not repeated while it lasts
  std::string last_left_out_;          // GUARDED_BY(mutex_): the same, for hosts not allowed
  uint64_t runs_ = 0;                  // GUARDED_BY(mutex_)
  std::thread thread_;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_ELASTIC_HOST_DISCOVERY_H_
