// HostBlacklist: the hosts an elastic job does not use, because a rank or the agent there failed.
// Horovod's rule (runner/elastic/discovery.py): without a cooldown range a failed host is out for
// good; with --blacklist-cooldown-range MIN MAX its n-th failure keeps it out for
// MIN * 2^n + MIN * jitter seconds (jitter in [0, 1)), clamped to [MIN, MAX], after which it may be
// used again. A failure during a cooldown neither counts nor extends it.
//
// Not thread-safe. The clock and the jitter are injected so that tests decide them.
#ifndef HVDRUN_LAUNCHER_ELASTIC_HOST_BLACKLIST_H_
#define HVDRUN_LAUNCHER_ELASTIC_HOST_BLACKLIST_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/placement/host_spec.h"
#include "launcher/elastic/elastic_options.h"

namespace hvdrun {

class HostBlacklist {
 public:
  // Seconds on a monotonic clock; a number in [0, 1).
  using Clock = std::function<double()>;
  using Jitter = std::function<double()>;

  // Defaults: std::chrono::steady_clock, and a uniform random jitter.
  explicit HostBlacklist(std::optional<CooldownRange> cooldown, Clock clock = nullptr,
                         Jitter jitter = nullptr);

  // `host` failed: out for its cooldown (or for good).
  void Add(const std::string& host);
  // `host` is out now.
  bool Contains(const std::string& host) const;
  // `hosts` without those that are out now, in their order.
  std::vector<HostSlots> Filter(const std::vector<HostSlots>& hosts) const;
  // Seconds until `host` may be used again: 0 when it is not out, -1 when out for good.
  double SecondsLeft(const std::string& host) const;

 private:
  struct Entry {
    int failures = 0;  // counted failures (outside a cooldown)
    double until = 0;  // the cooldown's end on clock_; unused without a range
  };

  std::optional<CooldownRange> cooldown_;
  Clock clock_;
  Jitter jitter_;
  std::map<std::string, Entry> entries_;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_ELASTIC_HOST_BLACKLIST_H_
