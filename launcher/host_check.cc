#include "launcher/host_check.h"

#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>

#include "common/exit_codes.h"
#include "common/version.h"
#include "launcher/agent_connection.h"
#include "launcher/host_facts_file.h"
#include "launcher/local_host.h"

namespace hvdrun {
namespace {

using Clock = std::chrono::steady_clock;

// How long agents get to exit once their stdin is closed, before they are killed.
constexpr std::chrono::milliseconds kAgentExitWait{3000};

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

struct CheckedHost {
  HostCheckResult result;
  std::unique_ptr<AgentConnection> connection;
  bool done = false;
};

// Reads what `host`'s agent sent; marks it done once it answered, failed or closed its stream.
void ReadAgent(CheckedHost& host) {
  std::vector<protocol::Message> messages;
  Status status = host.connection->ReadMessages(&messages);
  for (protocol::Message& message : messages) {
    if (host.done) break;
    if (auto* hello = std::get_if<protocol::AgentHello>(&message)) {
      host.result.hello = std::move(*hello);
      host.done = true;
    } else if (auto* error = std::get_if<protocol::AgentError>(&message)) {
      host.result.error = host.connection->Stage() + ": " + error->message;
      host.done = true;
    }
  }
  if (host.done) return;
  if (!status.ok()) {
    host.result.error = host.connection->Stage() + ": protocol error: " + status.message();
    host.done = true;
  } else if (host.connection->stream_closed()) {
    host.result.error = host.connection->Stage() + ": " + host.connection->EndReason();
    host.done = true;
  }
}

// Closes every agent's stdin and waits for them to exit, killing those that do not.
void ShutDown(std::vector<CheckedHost>& hosts) {
  for (CheckedHost& host : hosts) {
    if (host.connection) host.connection->CloseInput();
  }
  Clock::time_point deadline = Clock::now() + kAgentExitWait;
  bool killed = false;
  while (true) {
    bool all_reaped = true;
    std::vector<pollfd> fds;
    for (CheckedHost& host : hosts) {
      int status = 0;
      if (!host.connection || host.connection->Reap(&status)) continue;
      all_reaped = false;
      if (!host.connection->stream_closed()) fds.push_back({host.connection->read_fd(), POLLIN, 0});
      if (killed) continue;
      if (Clock::now() >= deadline) host.connection->Kill();
    }
    if (all_reaped) return;
    killed = killed || Clock::now() >= deadline;
    ::poll(fds.data(), fds.size(), 50);
    // Keep reading, so that no agent blocks on a full pipe.
    for (CheckedHost& host : hosts) {
      if (!host.connection || host.connection->stream_closed()) continue;
      std::vector<protocol::Message> ignored;
      (void)host.connection->ReadMessages(&ignored);
    }
  }
}

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
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(options.start_timeout_s);
  std::vector<CheckedHost> hosts;
  for (const HostSlots& entry : options.hosts) {
    CheckedHost host;
    host.result.host = entry.host;
    bool local = RunsHere(entry.host, entry.user);
    SshOptions ssh = options.ssh;
    if (!entry.user.empty()) ssh.user = entry.user;  // user@host overrides --ssh-user
    StatusOr<std::unique_ptr<AgentConnection>> connection =
        local ? AgentConnection::StartLocal(entry.host, local_agent_path)
              : AgentConnection::StartRemote(entry.host, ssh, options.remote_agent_path, deadline);
    if (!connection.ok()) {
      std::string message = connection.status().message();
      std::string prefix = "host " + entry.host + ": ";
      host.result.error = message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
      host.done = true;
    } else {
      host.connection = std::move(connection).value();
      protocol::Hello hello;
      hello.hvdrun_version = kVersion;
      hello.want_facts = true;  // no heartbeats: the agent answers, then waits for its stdin to close
      host.connection->Send(hello);
    }
    hosts.push_back(std::move(host));
  }

  while (Clock::now() < deadline) {
    std::vector<pollfd> fds;
    std::vector<CheckedHost*> owners;
    for (CheckedHost& host : hosts) {
      if (host.done) continue;
      fds.push_back({host.connection->read_fd(), POLLIN, 0});
      owners.push_back(&host);
    }
    if (fds.empty()) break;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<int64_t>(left, 0, 1000))) <= 0) continue;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0) ReadAgent(*owners[i]);
    }
  }
  for (CheckedHost& host : hosts) {
    if (!host.done) {
      host.result.error = host.connection->Stage() + ": no answer within " +
                          std::to_string(options.start_timeout_s) + " s (--start-timeout)";
    } else if (host.result.error.empty() &&
               host.result.hello.protocol_version != protocol::kProtocolVersion) {
      host.result.error = "agent start: version mismatch: its hvdrun-agent is " +
                          host.result.hello.hvdrun_version + " (protocol " +
                          std::to_string(host.result.hello.protocol_version) + "), this hvdrun is " +
                          kVersion + " (protocol " + std::to_string(protocol::kProtocolVersion) +
                          "); install the same hvdrun on every host";
    }
    if (host.result.error.empty()) {
      host.result.ssh = host.connection->remote()
                            ? "ok (" + host.connection->transport()->remote_address() + ")"
                            : "local (no SSH)";
    }
  }
  ShutDown(hosts);

  std::vector<HostCheckResult> results;
  bool failed = false;
  for (CheckedHost& host : hosts) {
    std::fputs(FormatHostCheck(host.result).c_str(), stdout);
    if (!host.result.error.empty()) {
      std::fprintf(stderr, "hvdrun: host %s: %s\n", host.result.host.c_str(), host.result.error.c_str());
      failed = true;
    }
    results.push_back(host.result);
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
