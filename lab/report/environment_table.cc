#include "lab/report/environment_table.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include "common/env_names.h"

namespace hvdrun::lab {
namespace {

// The facts the table shows, in its order, with their labels.
constexpr std::pair<const char*, const char*> kRows[] = {{"nics", "NIC model and count"},
                                                         {"gpus", "GPU model and count"},
                                                         {"gpu_connection", "GPU connection"},
                                                         {"os", "OS"},
                                                         {"gpu_driver", "GPU driver"},
                                                         {"framework", "Framework and version"},
                                                         {"cuda", "CUDA"},
                                                         {"nccl", "NCCL"},
                                                         {"mpi", "MPI"},
                                                         {"cpu", "CPU model and count"},
                                                         {"kernel", "Kernel"}};

// The value as the table shows it: hvdrun's list of interfaces becomes NIC models and counts.
std::string Shown(const std::string& key, const std::string& value) {
  return key == "nics" ? NicModels(value) : value;
}

EnvironmentRow ServersRow(const ExperimentResults& results) {
  int servers = 0;
  std::vector<std::string> hosts;
  int plans = 0;
  for (const StoredCell& stored : results.cells) {
    bool ran = std::any_of(stored.runs.begin(), stored.runs.end(),
                           [](const StoredRun& run) { return run.record.ok; });
    if (!ran) continue;
    servers = std::max(servers, stored.cell.servers);
    for (const StoredRun& run : stored.runs) {
      if (run.plan_hosts.empty()) continue;
      ++plans;
      for (const std::string& name : run.plan_hosts) {
        if (std::find(hosts.begin(), hosts.end(), name) == hosts.end()) hosts.push_back(name);
      }
    }
  }
  if (servers == 0) return {"Servers", "no cell has an ok run", "the runs' run.json"};
  std::string names;
  for (const std::string& host : hosts) names += (names.empty() ? "" : ", ") + host;
  std::string value = "up to " + std::to_string(servers) + " per cell";
  if (!names.empty()) value += " (hosts: " + names + ")";
  return {"Servers", value,
          plans > 0 ? "hvdrun's plan.json of " + std::to_string(plans) + " runs" : "experiment.json (cells)"};
}

// The framework the ranks' reports name, with the first cell that names it.
std::optional<EnvironmentRow> ReportedFramework(const ExperimentResults& results) {
  for (const StoredCell& stored : results.cells) {
    for (const StoredRun& run : stored.runs) {
      for (const RankReport& rank : run.ranks) {
        if (rank.framework.empty()) continue;
        return EnvironmentRow{"Framework and version", rank.framework,
                              "rank " + std::to_string(rank.rank) + "'s report in cells/" + stored.cell.id +
                                  "/repeat-" + std::to_string(run.repeat)};
      }
    }
  }
  return std::nullopt;
}

// Host facts hvdrun wrote, one entry (host, facts) per host: the first run's that has the host's file.
std::vector<std::pair<std::string, HostFacts>> ReportedHostFacts(const ExperimentResults& results) {
  std::vector<std::pair<std::string, HostFacts>> reported;
  for (const StoredCell& stored : results.cells) {
    for (const StoredRun& run : stored.runs) {
      for (const auto& [path, facts] : run.host_facts) {
        std::string host = facts.host.empty() ? std::filesystem::path(path).stem().string() : facts.host;
        bool known = std::any_of(reported.begin(), reported.end(),
                                 [&](const auto& entry) { return entry.first == host; });
        if (!known) reported.emplace_back(host, facts);
      }
    }
  }
  return reported;
}

}  // namespace

EnvironmentTable BuildEnvironmentTable(const ExperimentResults& results,
                                       const std::function<HostFacts()>& probe_now) {
  EnvironmentTable table;
  std::vector<EnvironmentRow>& rows = table.rows;
  rows.push_back(ServersRow(results));
  if (!results.slurm.job_id.empty()) {
    rows.push_back({"Slurm job",
                    results.slurm.job_id + " (nodes " + results.slurm.node_list + ", tasks per node " +
                        results.slurm.tasks_per_node +
                        "); each cell on the first nodes it needs, through srun",
                    std::string(env::kSlurmJobId) + ", " + env::kSlurmJobNodeList + ", " +
                        env::kSlurmTasksPerNode + ", environment.json"});
  }
  const std::vector<std::pair<std::string, HostFacts>> reported = ReportedHostFacts(results);
  std::optional<HostFacts> fallback = results.environment;
  bool used_fallback = false;
  auto fallback_facts = [&]() -> const HostFacts& {
    used_fallback = true;
    if (!fallback) {
      fallback = probe_now();
      for (auto& [key, fact] : fallback->facts) fact.source += ", read now";
      table.note = "\"read now\": read by hvdrun-lab report on " + fallback->host +
                   ", as the results hold neither host facts from the runs nor environment.json.";
    }
    return *fallback;
  };
  std::optional<EnvironmentRow> framework = ReportedFramework(results);
  for (const auto& [key, label] : kRows) {
    if (std::string(key) == "framework" && framework) {
      rows.push_back(*framework);
      continue;
    }
    // Distinct values over the hosts that reported this fact, each with its hosts.
    std::vector<std::pair<Fact, std::vector<std::string>>> values;
    for (const auto& [host, facts] : reported) {
      auto it = facts.facts.find(key);
      if (it == facts.facts.end()) continue;
      Fact fact = it->second;
      fact.value = Shown(key, fact.value);
      auto same = std::find_if(values.begin(), values.end(),
                               [&](const auto& entry) { return entry.first.value == fact.value; });
      if (same == values.end()) {
        values.push_back({fact, {host}});
      } else {
        same->second.push_back(host);
      }
    }
    if (values.empty()) {
      const HostFacts& facts = fallback_facts();
      auto it = facts.facts.find(key);
      if (it != facts.facts.end()) {
        rows.push_back({label, Shown(key, it->second.value), it->second.source});
      } else {
        rows.push_back({label, "not recorded", "in neither the runs' host facts nor environment.json"});
      }
      continue;
    }
    std::string value;
    std::string source;
    for (const auto& [fact, hosts] : values) {
      std::string names;
      for (const std::string& host : hosts) names += (names.empty() ? "" : ", ") + host;
      value += (value.empty() ? "" : "; ") + fact.value + (values.size() > 1 ? " (" + names + ")" : "");
      source += (source.empty() ? "" : "; ") + fact.source + " (" + names + ")";
    }
    rows.push_back({label, value, "hvdrun host facts: " + source});
  }
  if (used_fallback && results.environment) table.note = results.environment_note;
  return table;
}

}  // namespace hvdrun::lab
