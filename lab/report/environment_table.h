// The environment table of the lab report: servers, NICs, GPUs and their connection, OS, driver,
// framework, CUDA, NCCL and MPI versions, each with where the value came from.
//
// Sources, best first: the host facts hvdrun wrote for the runs (hosts/*.json in a run's results,
// one file per host, when hvdrun writes them); then environment.json, what `hvdrun-lab run` read on
// the machine it ran on; then, when neither is there, what this machine shows now, said so. Hosts
// that differ in a value are listed each with its own. The framework is the one the ranks' reports
// name ("framework", "framework_version"), when they do.
#ifndef HVDRUN_LAB_REPORT_ENVIRONMENT_TABLE_H_
#define HVDRUN_LAB_REPORT_ENVIRONMENT_TABLE_H_

#include <functional>
#include <string>
#include <vector>

#include "lab/host_facts.h"
#include "lab/store/experiment_results.h"

namespace hvdrun::lab {

struct EnvironmentRow {
  std::string item;
  std::string value;
  std::string source;
};

struct EnvironmentTable {
  std::vector<EnvironmentRow> rows;
  std::string note;  // for under the table: where environment.json, or the values read now, came from
};

// `probe_now` is called only when the results hold no facts for a host at all.
EnvironmentTable BuildEnvironmentTable(const ExperimentResults& results,
                                       const std::function<HostFacts()>& probe_now);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_REPORT_ENVIRONMENT_TABLE_H_
