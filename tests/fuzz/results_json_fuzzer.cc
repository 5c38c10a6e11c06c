// libFuzzer target for the JSON files of a results directory as `hvdrun-lab report` reads them back
// (lab/json_file.h, lab/store/experiment_results.h): any bytes are parsed with their bounds, or
// refused with one line naming the place; a document parsed is read as each file it could be
// (experiment.json, run.json, a rank's report, a host's facts), each read giving its figures or
// one line naming the file and the member. Seeds: tests/lab/fixtures. Build and run: scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lab/host_facts.h"
#include "lab/json_file.h"
#include "lab/store/experiment_results.h"
#include "lab/store/rank_report.h"
#include "lab/store/run_store.h"
#include "tests/fuzz/fuzz_checks.h"

namespace lab = hvdrun::lab;
using hvdrun::StatusOr;
using hvdrun::fuzzing::CheckOneLine;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  StatusOr<nlohmann::json> json = lab::ParseJson(text, "/fuzz/file.json");
  if (!json.ok()) {
    CheckOneLine(json.status().message());
    return 0;
  }
  StatusOr<lab::ExperimentResults> experiment = lab::ExperimentResultsFromJson(json.value(), "/fuzz");
  if (!experiment.ok()) CheckOneLine(experiment.status().message());
  StatusOr<lab::RankReport> report = lab::RankReportFromJson(0, json.value(), "/fuzz/rank-0.json");
  if (!report.ok()) CheckOneLine(report.status().message());
  StatusOr<lab::RunRecord> record = lab::RunRecordFromJson(json.value());
  if (!record.ok()) CheckOneLine(record.status().message());
  StatusOr<lab::HostFacts> facts = lab::HostFactsFromJson(json.value(), "hosts/fuzz.json");
  if (!facts.ok()) CheckOneLine(facts.status().message());
  return 0;
}
