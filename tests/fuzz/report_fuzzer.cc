// libFuzzer target for the report (lab/report/report_writer.h) of any results a directory can hold.
// The input is one JSON document standing for a results directory:
//   {"experiment": <experiment.json>, "runs": [[<rank 0's report>, <rank 1's>, ...], ...]}
// run k going to cell k mod C, repeat k div C + 1, of the experiment's C cells (ok when it has a
// report, failed otherwise); report_seeds.py makes such documents of tests/lab/fixtures. Whatever it
// holds, every file of the report is written, and no number in it is infinite or not a number: the
// fuzz build makes the report's number writer abort on one (lab/number_text.h), and report.json's
// numbers are checked here. Build and run: scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "lab/json_file.h"
#include "lab/report/report_tables.h"
#include "lab/report/report_writer.h"
#include "lab/store/experiment_results.h"
#include "tests/fuzz/fuzz_checks.h"

namespace lab = hvdrun::lab;
using hvdrun::StatusOr;

namespace {

// The runs of `runs` given to the cells of `results`, as the input's form says.
void AddRuns(const nlohmann::json& runs, lab::ExperimentResults& results) {
  if (!runs.is_array() || results.cells.empty()) return;
  const size_t cells = results.cells.size();
  for (size_t k = 0; k < runs.size(); ++k) {
    const int repeat = static_cast<int>(k / cells) + 1;
    if (repeat > results.repeats) break;
    lab::StoredRun run;
    run.repeat = repeat;
    run.dir = "/fuzz/run";
    if (runs[k].is_array()) {
      for (size_t rank = 0; rank < runs[k].size(); ++rank) {
        StatusOr<lab::RankReport> report =
            lab::RankReportFromJson(static_cast<int>(rank), runs[k][rank], "/fuzz/rank.json");
        if (report.ok()) run.ranks.push_back(report.value());
      }
    }
    run.record.ok = !run.ranks.empty();
    run.record.error = run.record.ok ? "" : "no report";
    results.cells[k % cells].runs.push_back(std::move(run));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  StatusOr<nlohmann::json> input = lab::ParseJson(text, "/fuzz/results.json");
  if (!input.ok() || !input->is_object() || !input->contains("experiment")) return 0;
  StatusOr<lab::ExperimentResults> results = lab::ExperimentResultsFromJson(input->at("experiment"), "/fuzz");
  if (!results.ok()) return 0;
  if (input->contains("runs")) AddRuns(input->at("runs"), results.value());
  const lab::ReportTables tables = lab::BuildReportTables(results.value(), [] {
    lab::HostFacts host;
    host.host = "fuzz";
    return host;
  });
  hvdrun::fuzzing::CheckFiniteNumbers(lab::RenderJson(results.value(), tables));
  for (const auto& [name, contents] : lab::RenderReportFiles(results.value(), tables)) {
    if (name.empty() || contents.empty()) std::abort();
  }
  return 0;
}
