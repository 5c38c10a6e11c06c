#include "launcher/elastic/host_discovery.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <utility>

#include "common/error_text.h"
#include "common/process/command_output.h"

namespace hvdrun {
namespace {

std::string Trimmed(const std::string& text) {
  size_t begin = 0;
  size_t end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin])) != 0) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1])) != 0) --end;
  return text.substr(begin, end - begin);
}

// The line names its slots: it ends in ':' and digits, after any IPv6 brackets.
bool HasSlots(const std::string& line) {
  const size_t colon = line.rfind(':');
  if (colon == std::string::npos || colon + 1 == line.size()) return false;
  const size_t bracket = line.rfind(']');
  if (bracket != std::string::npos && bracket > colon) return false;
  if (line.find('[') == std::string::npos && line.find(':') != colon) return false;  // bare IPv6
  for (size_t i = colon + 1; i < line.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(line[i])) == 0) return false;
  }
  return true;
}

bool SameHosts(const std::vector<HostSlots>& a, const std::vector<HostSlots>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].host != b[i].host || a[i].slots != b[i].slots || a[i].user != b[i].user) return false;
  }
  return true;
}

}  // namespace

StatusOr<std::vector<HostSlots>> ParseDiscoveredHosts(const std::string& output, int slots_per_host) {
  HostListBuilder builder;
  std::istringstream lines(output);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    const std::string entry = Trimmed(line);
    if (entry.empty()) continue;
    const std::string spec = HasSlots(entry) ? entry : entry + ":" + std::to_string(slots_per_host);
    StatusOr<std::vector<HostSlots>> parsed =
        entry.find(',') == std::string::npos
            ? ParseHostList(spec)
            : StatusOr<std::vector<HostSlots>>(Status::Error("one host per line"));
    std::string problem = parsed.ok() ? builder.Add(parsed.value().front()) : parsed.status().message();
    if (problem.rfind("-H: ", 0) == 0) problem.erase(0, 4);  // the line is no -H value
    if (!problem.empty()) {
      return Status::Error("line " + std::to_string(number) + ": '" + PrintableText(entry) + "': " + problem);
    }
  }
  return std::move(builder).Take();
}

StatusOr<std::vector<HostSlots>> DiscoverHosts(const std::string& script, int slots_per_host,
                                               std::chrono::milliseconds timeout) {
  const std::string named = "host discovery script '" + PrintableText(script) + "': ";
  StatusOr<std::string> output = CaptureOutput({script}, timeout);
  if (!output.ok()) return Status::Error(named + output.status().message());
  StatusOr<std::vector<HostSlots>> hosts = ParseDiscoveredHosts(output.value(), slots_per_host);
  if (!hosts.ok()) {
    return Status::Error(named + "its output is not 'host[:slots]' lines: " + hosts.status().message());
  }
  return hosts;
}

std::vector<HostSlots> KeepAllowedHosts(std::vector<HostSlots> hosts, const AllowedHosts& allowed,
                                        const std::string& script, std::string* warning) {
  warning->clear();
  if (allowed.hosts.empty()) return hosts;
  std::string left_out;
  size_t count = 0;
  std::erase_if(hosts, [&](const HostSlots& host) {
    if (std::find(allowed.hosts.begin(), allowed.hosts.end(), host.host) != allowed.hosts.end()) return false;
    left_out += (count++ == 0 ? "" : ", ") + PrintableText(host.host);
    return true;
  });
  if (count > 0) {
    *warning = "host discovery script '" + PrintableText(script) + "': " + (count == 1 ? "host " : "hosts ") +
               left_out + (count == 1 ? " is not a node of " : " are not nodes of ") + allowed.where +
               "; the job goes on without " + (count == 1 ? "it" : "them");
  }
  return hosts;
}

HostDiscovery::HostDiscovery(std::string script, int slots_per_host, std::vector<HostSlots> first,
                             AllowedHosts allowed, std::chrono::milliseconds period,
                             std::chrono::milliseconds timeout)
    : script_(std::move(script)),
      slots_per_host_(slots_per_host),
      allowed_(std::move(allowed)),
      period_(period),
      timeout_(timeout),
      hosts_(first),
      taken_(std::move(first)) {}

HostDiscovery::~HostDiscovery() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HostDiscovery::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void HostDiscovery::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    StatusOr<std::vector<HostSlots>> hosts = DiscoverHosts(script_, slots_per_host_, timeout_);
    lock.lock();
    if (hosts.ok()) {
      std::string left_out;
      hosts_ = KeepAllowedHosts(std::move(hosts).value(), allowed_, script_, &left_out);
      if (!left_out.empty() && left_out != last_left_out_) warnings_.push_back(left_out);
      last_left_out_ = std::move(left_out);
      last_problem_.clear();
      ++runs_;
    } else if (hosts.status().message() != last_problem_) {
      last_problem_ = hosts.status().message();
      warnings_.push_back(last_problem_ + "; the job keeps its last hosts");
    }
    wake_.wait_for(lock, period_, [this] { return stopping_; });
  }
}

std::optional<std::vector<HostSlots>> HostDiscovery::TakeChange() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (SameHosts(hosts_, taken_)) return std::nullopt;
  taken_ = hosts_;
  return taken_;
}

std::vector<std::string> HostDiscovery::TakeWarnings() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(warnings_, {});
}

uint64_t HostDiscovery::runs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return runs_;
}

}  // namespace hvdrun
