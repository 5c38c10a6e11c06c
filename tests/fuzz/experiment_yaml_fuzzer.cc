// libFuzzer target for the experiment file (lab/experiment/experiment_config.h, matrix.h): any text is
// parsed, or refused with one line; what is accepted is expanded on a machine with one GPU and for an
// sbatch submission, or refused with one line; every cell's hvdrun command and the sbatch script
// are built, and the script has its fixed number of lines whatever the values (no value adds one);
// and what `run` writes of the experiment (experiment.json) is read back by `report`
// (ExperimentResultsFromJson): `report` accepts whatever `run` can write. Build and run:
// scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lab/experiment/experiment_config.h"
#include "lab/experiment/matrix.h"
#include "lab/json_file.h"
#include "lab/run/slurm_job.h"
#include "lab/store/experiment_results.h"
#include "tests/fuzz/fuzz_checks.h"

namespace {

using hvdrun::StatusOr;
namespace lab = hvdrun::lab;

void CheckSbatchScript(const lab::ExperimentConfig& config, const lab::Matrix& matrix) {
  lab::SbatchOptions options;
  options.lab_path = "/usr/bin/hvdrun-lab";
  options.experiment_path = config.path;
  options.results = "/results";
  options.time_limit = "1:00:00";
  options.partition = "gpu";
  StatusOr<std::string> script = lab::BuildSbatchScript(config, matrix, options);
  if (!script.ok()) std::abort();  // nothing in the experiment can make it fail
  size_t lines = 0;
  for (char c : script.value()) lines += c == '\n' ? 1 : 0;
  if (lines != 9) std::abort();
}

void CheckReportReadsIt(const lab::ExperimentConfig& config, const lab::Matrix& matrix) {
  StatusOr<nlohmann::json> written = lab::ParseJson(lab::JsonFileText(lab::ExperimentToJson(config, matrix)),
                                                    "/fuzz/results/experiment.json");
  if (!written.ok()) std::abort();
  StatusOr<lab::ExperimentResults> read = lab::ExperimentResultsFromJson(written.value(), "/fuzz/results");
  if (!read.ok() || read->cells.size() != matrix.cells.size()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  StatusOr<lab::ExperimentConfig> config = lab::ParseExperiment(text, "/nonexistent/fuzz/exp.yaml");
  if (!config.ok()) {
    hvdrun::fuzzing::CheckOneLine(config.status().message());
    return 0;
  }
  lab::MachineFacts local;
  local.gpus = 1;
  local.gpus_source = "the fuzzer's";
  lab::MachineFacts submission;
  submission.slurm = lab::AllocationForSubmission(config.value());
  for (const lab::MachineFacts* machine : {&local, &submission}) {
    StatusOr<lab::Matrix> matrix = lab::ExpandMatrix(config.value(), *machine);
    if (!matrix.ok()) {
      hvdrun::fuzzing::CheckOneLine(matrix.status().message());
      continue;
    }
    for (const lab::Cell& cell : matrix->cells) {
      if (lab::HvdrunArguments(cell, "/bin/program", "RUN/hvdrun", "RUN/logs").empty()) std::abort();
    }
    if (machine == &submission) {
      CheckSbatchScript(config.value(), matrix.value());
    } else {
      CheckReportReadsIt(config.value(), matrix.value());
    }
  }
  return 0;
}
