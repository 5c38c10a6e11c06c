#include "launcher/elastic/host_blacklist.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <utility>

namespace hvdrun {
namespace {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double UniformJitter() {
  static std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

}  // namespace

HostBlacklist::HostBlacklist(std::optional<CooldownRange> cooldown, Clock clock, Jitter jitter)
    : cooldown_(cooldown),
      clock_(clock ? std::move(clock) : Clock(SteadySeconds)),
      jitter_(jitter ? std::move(jitter) : Jitter(UniformJitter)) {}

void HostBlacklist::Add(const std::string& host) {
  Entry& entry = entries_[host];
  if (!cooldown_) {
    ++entry.failures;
    return;
  }
  const double now = clock_();
  if (entry.failures > 0 && entry.until > now) return;  // still cooling down
  ++entry.failures;
  const double lower = cooldown_->min_s;
  // 2^n stops mattering long before it overflows: the clamp below is at most an hour.
  const double delay = lower * std::ldexp(1.0, std::min(entry.failures, 30)) + jitter_() * lower;
  entry.until = now + std::clamp(delay, lower, static_cast<double>(cooldown_->max_s));
}

double HostBlacklist::SecondsLeft(const std::string& host) const {
  auto found = entries_.find(host);
  if (found == entries_.end() || found->second.failures == 0) return 0;
  if (!cooldown_) return -1;
  return std::max(0.0, found->second.until - clock_());
}

bool HostBlacklist::Contains(const std::string& host) const { return SecondsLeft(host) != 0; }

std::vector<HostSlots> HostBlacklist::Filter(const std::vector<HostSlots>& hosts) const {
  std::vector<HostSlots> kept;
  for (const HostSlots& host : hosts) {
    if (!Contains(host.host)) kept.push_back(host);
  }
  return kept;
}

}  // namespace hvdrun
