#include "launcher/host_check.h"

#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>

#include "common/exit_codes.h"
#include "common/version.h"
#include "launcher/agents/agent_launcher.h"
#include "launcher/results/host_facts_file.h"

namespace hvdrun {
namespace {

std::string Row(const std::string& label, const std::string& value) {
  std::string padded = "  " + label;
  padded.resize(std::max<size_t>(padded.size() + 1, 15), ' ');
  return padded + value + "\n";
}

std::string FactValue(const protocol::AgentHello& hello, const std::string& key) {
  for (const protocol::HostFact& fact : hello.facts) {
    if (fact.key == key) return fact.value;
  }
  return "unknown";
}

// Each host's failure, as the launcher reports it; --check starts no rank.
class CheckEvents : public RankEvents {
 public:
  explicit CheckEvents(size_t hosts) : errors_(hosts) {}
  const std::string& error(int host_index) const { return errors_[host_index]; }

  void StartFailed(int host_index, const std::string& reason, int /*exit_code*/) override {
    if (host_index >= 0 && errors_[host_index].empty()) errors_[host_index] = reason;
  }
  void RankStarted(int /*rank*/, int /*pid*/) override {}
  void RankOutput(const protocol::RankOutput& /*output*/) override {}
  void RankEnded(const RankEnd& /*end*/) override {}
  void RankLost(int /*rank*/, const std::string& /*reason*/, bool /*stop_requested*/) override {}

 private:
  std::vector<std::string> errors_;
};

}  // namespace

std::string FormatHostCheck(const HostCheckResult& result) {
  if (!result.error.empty()) return result.host + ": FAILED\n" + Row("error", result.error);
  const protocol::AgentHello& hello = result.hello;
  std::string out =
      result.host + ": ok\n" + Row("ssh", result.ssh) +
      Row("agent", "hvdrun-agent " + hello.hvdrun_version + " (protocol " +
                       std::to_string(hello.protocol_version) + ", pid " + std::to_string(hello.pid) + ")");
  for (const protocol::HostFact& fact : hello.facts) {
    if (fact.key == "gpu_count" || fact.key == "hvdrun_agent") continue;
    if (fact.key != "nics") {
      out += Row(fact.key, fact.value);
      continue;
    }
    // One row per interface.
    size_t start = 0;
    std::string label = "nics";
    while (start <= fact.value.size()) {
      size_t end = fact.value.find("; ", start);
      if (end == std::string::npos) end = fact.value.size();
      out += Row(label, fact.value.substr(start, end - start));
      label.clear();
      start = end + 2;
    }
  }
  return out;
}

std::vector<std::string> VersionMismatches(const std::vector<HostCheckResult>& results) {
  std::vector<std::string> lines;
  for (const char* key : kCheckedVersionKeys) {
    // Each distinct value with its hosts, in first-seen order.
    std::vector<std::pair<std::string, std::vector<std::string>>> values;
    for (const HostCheckResult& result : results) {
      if (!result.error.empty()) continue;
      std::string value = FactValue(result.hello, key);
      auto it = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.first == value; });
      if (it == values.end()) {
        values.push_back({value, {result.host}});
      } else {
        it->second.push_back(result.host);
      }
    }
    if (values.size() < 2) continue;
    std::string line = std::string(key) + " differs:";
    for (size_t i = 0; i < values.size(); ++i) {
      line += (i == 0 ? " '" : "; '") + values[i].first + "' on ";
      for (size_t j = 0; j < values[i].second.size(); ++j) line += (j == 0 ? "" : ", ") + values[i].second[j];
    }
    lines.push_back(line);
  }
  return lines;
}

int RunHostCheck(const LaunchOptions& options, const std::string& local_agent_path) {
  ::signal(SIGPIPE, SIG_IGN);  // an agent that is gone shows as the end of its stream
  // Every host is checked, whatever -np places on it.
  int slots = 0;
  for (const HostSlots& entry : options.hosts) slots += entry.slots;
  StatusOr<RankAssignment> assignment = RankAssignment::Assign(options.hosts, slots);
  if (!assignment.ok()) {
    std::fprintf(stderr, "hvdrun: %s\n", assignment.status().message().c_str());
    return kExitUsage;
  }
  const std::vector<HostRanks>& hosts = assignment.value().hosts();
  AgentLauncher launcher(options, local_agent_path, AgentLauncher::Purpose::kCheck);
  CheckEvents events(hosts.size());
  launcher.Reach(assignment.value(), &events);
  while (!launcher.Reached()) {
    std::vector<pollfd> fds;
    PollRankLauncher(launcher, fds);
  }
  std::vector<HostCheckResult> checked;
  for (int i = 0; i < static_cast<int>(hosts.size()); ++i) {
    HostCheckResult result;
    result.host = hosts[i].host;
    result.error = events.error(i);
    if (const protocol::AgentHello* hello = launcher.hello(i); hello != nullptr && result.error.empty()) {
      result.hello = *hello;
      result.ssh = launcher.agent_start() == AgentStart::kSlurm
                       ? "none: through srun (" + launcher.host(i).address + ")"
                   : launcher.remote(i) ? "ok (" + launcher.host(i).address + ")"
                                        : "local (no SSH)";
    }
    checked.push_back(std::move(result));
  }
  launcher.ShutDown();

  std::vector<HostCheckResult> results;
  bool failed = false;
  for (HostCheckResult& result : checked) {
    std::fputs(FormatHostCheck(result).c_str(), stdout);
    if (!result.error.empty()) {
      std::fprintf(stderr, "hvdrun: host %s: %s\n", result.host.c_str(), result.error.c_str());
      failed = true;
    }
    results.push_back(std::move(result));
  }
  if (options.backend) {
    std::printf("a job with these options would use the %s controller (%s)\n",
                std::string(BackendName(*options.backend)).c_str(), options.backend_reason.c_str());
  }
  std::fflush(stdout);
  if (!options.results_dir.empty()) {
    for (const HostCheckResult& result : results) {
      if (!result.error.empty()) continue;
      Status status = WriteHostFactsFile(options.results_dir, result.host, result.hello.facts);
      if (!status.ok()) {
        std::fprintf(stderr, "hvdrun: %s\n", status.message().c_str());
        return kExitResults;
      }
    }
  }
  if (failed) return kExitLaunchFailure;
  std::vector<std::string> mismatches = VersionMismatches(results);
  for (const HostCheckResult& result : results) {
    if (result.hello.hvdrun_version != kVersion) {
      mismatches.push_back("hvdrun-agent on " + result.host + " is " + result.hello.hvdrun_version +
                           ", this hvdrun is " + kVersion);
    }
  }
  for (const std::string& line : mismatches) std::fprintf(stderr, "hvdrun: --check: %s\n", line.c_str());
  if (!mismatches.empty()) return kExitHostMismatch;
  std::fprintf(stderr, "hvdrun: --check: %zu host%s answered with the same versions\n", results.size(),
               results.size() == 1 ? "" : "s");
  return 0;
}

}  // namespace hvdrun
