#include "lab/store/experiment_results.h"

#include <algorithm>
#include <filesystem>
#include <string_view>

#include "common/version.h"
#include "common/whole_number.h"
#include "lab/experiment/experiment_limits.h"
#include "lab/json_fields.h"
#include "lab/json_file.h"
#include "lab/whole_file.h"

namespace hvdrun::lab {
namespace {

namespace fs = std::filesystem;

const char* AxisKindName(AxisKind kind) {
  switch (kind) {
    case AxisKind::kBackend:
      return "backend";
    case AxisKind::kNumProc:
      return "np";
    case AxisKind::kProcsPerServer:
      return "processes_per_server";
    case AxisKind::kServers:
      return "servers";
    case AxisKind::kProgramFlag:
      return "program_flag";
    case AxisKind::kEnvironment:
      return "environment";
    case AxisKind::kFusion:
      return "fusion";
    case AxisKind::kCompression:
      return "compression";
  }
  return "";
}

// The JSON file at `path` (lab/json_file.h); a problem is added and null returned when it cannot
// be read.
nlohmann::json ReadJson(const std::string& path, std::vector<std::string>& problems) {
  StatusOr<nlohmann::json> json = ReadJsonFile(path);
  if (!json.ok()) {
    problems.push_back(json.status().message());
    return nullptr;
  }
  return std::move(json).value();
}

// hvdrun's plan.json: the hosts, in order.
std::vector<std::string> ReadPlanHosts(const std::string& path, std::vector<std::string>& problems) {
  std::vector<std::string> hosts;
  const nlohmann::json plan = ReadJson(path, problems);
  if (!plan.is_object() || !plan.contains("hosts") || !plan["hosts"].is_array()) return hosts;
  for (const nlohmann::json& host : plan["hosts"]) {
    if (host.is_object() && host.contains("host") && host["host"].is_string()) {
      const std::string name = host["host"].get<std::string>();
      if (!name.empty()) hosts.push_back(name);
    }
  }
  return hosts;
}

// hvdrun's summary.json: how many rounds it records (docs/results.md); 0 when it records none.
int ReadSummaryRounds(const std::string& path, std::vector<std::string>& problems) {
  const nlohmann::json summary = ReadJson(path, problems);
  JsonFields fields(summary, path);
  const size_t rounds = fields.List("rounds").size();
  if (!fields.ok()) {
    problems.push_back(fields.status().message());
    return 0;
  }
  return static_cast<int>(rounds);  // a file of at most kMaxJsonFileBytes holds fewer than 2^31
}

// Every rank's report of hvdrun's results directory `hvdrun_dir`, in rank order.
std::vector<RankReport> ReadRankReports(const std::string& hvdrun_dir, std::vector<std::string>& problems) {
  std::vector<std::pair<int, std::string>> rank_files;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(hvdrun_dir + "/ranks", error)) {
    const std::string name = entry.path().filename().string();
    const std::string_view file = name;
    constexpr std::string_view kPrefix = "rank-";
    constexpr std::string_view kSuffix = ".json";
    if (!file.starts_with(kPrefix) || !file.ends_with(kSuffix)) continue;
    const ParsedWholeNumber rank = ParseWholeNumber(
        file.substr(kPrefix.size(), file.size() - kPrefix.size() - kSuffix.size()), 0, kMaxProcesses - 1);
    if (rank.ok()) rank_files.emplace_back(static_cast<int>(rank.value), entry.path().string());
  }
  std::sort(rank_files.begin(), rank_files.end());
  std::vector<RankReport> ranks;
  for (const auto& [rank, path] : rank_files) {
    nlohmann::json json = ReadJson(path, problems);
    if (json.is_null()) continue;
    StatusOr<RankReport> report = RankReportFromJson(rank, json, path);
    if (!report.ok()) {
      problems.push_back(report.status().message());
      continue;
    }
    ranks.push_back(std::move(report).value());
  }
  return ranks;
}

// hvdrun's hosts/*.json, by file name.
std::vector<std::pair<std::string, HostFacts>> ReadHostFacts(const std::string& run_dir,
                                                             std::vector<std::string>& problems) {
  std::vector<std::string> host_files;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(run_dir + "/hvdrun/hosts", error)) {
    if (entry.path().extension() == ".json") host_files.push_back(entry.path().string());
  }
  std::sort(host_files.begin(), host_files.end());
  std::vector<std::pair<std::string, HostFacts>> hosts;
  for (const std::string& path : host_files) {
    nlohmann::json json = ReadJson(path, problems);
    if (json.is_null()) continue;
    std::string label = fs::relative(path, run_dir, error).string();
    StatusOr<HostFacts> facts = HostFactsFromJson(json, label);
    if (!facts.ok()) {
      problems.push_back(path + ": " + facts.status().message());
      continue;
    }
    hosts.emplace_back(path, facts.value());
  }
  return hosts;
}

StoredRun ReadRun(const std::string& run_dir, int repeat, const RunRecord& record,
                  std::vector<std::string>& problems) {
  StoredRun run;
  run.repeat = repeat;
  run.dir = run_dir;
  run.record = record;
  const std::string hvdrun_dir = run_dir + "/hvdrun";
  std::error_code error;
  if (fs::exists(hvdrun_dir + "/plan.json", error)) {
    run.plan_hosts = ReadPlanHosts(hvdrun_dir + "/plan.json", problems);
  }
  if (fs::exists(hvdrun_dir + "/summary.json", error)) {
    run.rounds = ReadSummaryRounds(hvdrun_dir + "/summary.json", problems);
  }
  run.ranks = ReadRankReports(hvdrun_dir, problems);
  run.host_facts = ReadHostFacts(run_dir, problems);
  const std::string autotune_log = run_dir + "/" + kAutotuneLogFile;
  if (fs::exists(autotune_log, error)) {
    StatusOr<std::string> text = ReadWholeFile(autotune_log, kMaxAutotuneLogBytes);
    StatusOr<AutotuneOutcome> outcome = text.ok() ? AutotuneOutcomeFromCsv(text.value(), autotune_log)
                                                  : StatusOr<AutotuneOutcome>(text.status());
    if (outcome.ok()) {
      run.autotune = outcome.value();
    } else {
      problems.push_back(outcome.status().message());
    }
  }
  return run;
}

// experiment.json's figure names and the experiment's `hvdrun` section.
void ReadFiguresAndOptions(JsonFields& experiment, ExperimentResults& results) {
  JsonFields figures = experiment.Object("figures");
  FigureNames& names = results.figures;
  names.step_time = figures.Text("step_time", names.step_time);
  names.step_time_scale = figures.Positive("step_time_scale", kMaxStepTimeScale, names.step_time_scale);
  names.throughput = figures.Text("throughput", names.throughput);
  names.throughput_unit = figures.Text("throughput_unit", names.throughput_unit);
  names.accuracy = figures.Text("accuracy", names.accuracy);
  names.training_time = figures.Text("training_time", names.training_time);
  const nlohmann::json& options = experiment.Object("hvdrun_options").json();
  for (const auto& item : options.items()) {
    std::string value;
    if (item.value().is_array()) {
      for (const nlohmann::json& entry : item.value()) {
        value += (value.empty() ? "" : ", ") + (entry.is_string() ? entry.get<std::string>() : entry.dump());
      }
    } else {
      value = item.value().is_string() ? item.value().get<std::string>() : item.value().dump();
    }
    results.hvdrun_options.emplace_back(item.key(), value);
  }
}

// One of experiment.json's "cells"; nullopt (with a problem) for one without a usable id.
std::optional<Cell> ReadCell(JsonFields& json, const std::string& experiment_path,
                             std::vector<std::string>& problems) {
  Cell cell;
  cell.id = json.Text("id", "");
  if (cell.id.empty() || cell.id.find('/') != std::string::npos || cell.id[0] == '.') {
    problems.push_back(experiment_path + ": a cell without a valid id");
    return std::nullopt;
  }
  for (const nlohmann::json& pair : json.List("values")) {
    if (pair.is_array() && pair.size() == 2 && pair[0].is_string() && pair[1].is_string()) {
      cell.values.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
    }
  }
  cell.backend = json.Text("backend", "");
  cell.num_proc = static_cast<int>(json.Whole("np", 1, kMaxProcesses, 1));
  cell.servers = static_cast<int>(json.Whole("servers", 1, kMaxProcesses, 1));
  cell.procs_per_server = static_cast<int>(json.Whole("procs_per_server", 1, kMaxProcesses, cell.num_proc));
  cell.skip_reason = json.Text("skip_reason", "");
  return cell;
}

// environment.json: the machine `run` ran on, and the Slurm job it ran in.
void ReadEnvironment(const std::string& dir, ExperimentResults& results) {
  std::error_code error;
  if (!fs::exists(dir + "/environment.json", error)) return;
  const std::string path = dir + "/environment.json";
  nlohmann::json environment = ReadJson(path, results.problems);
  if (environment.is_null()) return;
  JsonFields fields(environment, path);
  const std::string probed_at = fields.Text("probed_at", "");
  const std::string host = fields.Text("host", "this machine");
  JsonFields slurm = fields.Object("slurm");
  results.slurm.job_id = slurm.Text("job_id", "");
  results.slurm.node_list = slurm.Text("node_list", "");
  results.slurm.tasks_per_node = slurm.Text("tasks_per_node", "");
  StatusOr<HostFacts> facts = HostFactsFromJson(environment, "environment.json");
  if (!fields.ok() || !facts.ok()) {
    results.problems.push_back(fields.ok() ? path + ": " + facts.status().message()
                                           : fields.status().message());
    results.slurm = SlurmAllocation();
    return;
  }
  results.environment_note = "environment.json: read by hvdrun-lab run on " + host +
                             (probed_at.empty() ? "" : " at " + probed_at) + ".";
  results.environment = facts.value();
}

}  // namespace

nlohmann::json ExperimentToJson(const ExperimentConfig& config, const Matrix& matrix) {
  nlohmann::json axes = nlohmann::json::array();
  for (const Axis& axis : config.axes) {
    nlohmann::json values = nlohmann::json::array();
    for (const AxisValue& value : axis.values) values.push_back(value.text);
    axes.push_back({{"name", axis.name},
                    {"kind", AxisKindName(axis.kind)},
                    {"target", axis.target},
                    {"from_matrix", axis.from_matrix},
                    {"values", values}});
  }
  nlohmann::json cells = nlohmann::json::array();
  for (const Cell& cell : matrix.cells) {
    nlohmann::json values = nlohmann::json::array();
    for (const auto& [name, value] : cell.values) values.push_back({name, value});
    std::string hosts;
    for (const HostSlots& host : cell.hosts) {
      if (!hosts.empty()) hosts += ',';
      hosts += FormatHostSlots(host);
    }
    cells.push_back({{"id", cell.id},
                     {"values", values},
                     {"backend", cell.backend},
                     {"np", cell.num_proc},
                     {"servers", cell.servers},
                     {"procs_per_server", cell.procs_per_server},
                     {"hosts", hosts},
                     {"hvdrun_args", cell.hvdrun_args},
                     {"skip_reason", cell.skip_reason}});
  }
  nlohmann::json hvdrun_options = nlohmann::json::object();
  for (const HvdrunOption& option : config.hvdrun_options) {
    const bool list = option.key == "network_interface";
    hvdrun_options[option.key] = list ? nlohmann::json(option.values) : nlohmann::json(option.values.front());
  }
  const FigureNames& figures = config.figures;
  return {{"hvdrun_lab_version", kVersion},
          {"name", config.name},
          {"description", config.description},
          {"experiment_file", config.path},
          {"program", config.program},
          {"repeats", config.repeats},
          {"timeout_s", config.timeout_s},
          {"hvdrun_options", hvdrun_options},
          {"hvdrun_arguments", HvdrunOptionArguments(config)},
          {"figures",
           {{"step_time", figures.step_time},
            {"step_time_scale", figures.step_time_scale},
            {"throughput", figures.throughput},
            {"throughput_unit", figures.throughput_unit},
            {"accuracy", figures.accuracy},
            {"training_time", figures.training_time}}},
          {"axes", axes},
          {"excluded", matrix.excluded},
          {"cells", cells}};
}

std::vector<std::string> FindExperimentDirs(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    std::error_code entry_error;
    if (entry.is_directory(entry_error) &&
        fs::is_regular_file(entry.path() / "experiment.json", entry_error)) {
      found.push_back(entry.path().string());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

StatusOr<ExperimentResults> ExperimentResultsFromJson(const nlohmann::json& json, const std::string& dir) {
  const std::string path = dir + "/experiment.json";
  if (!json.is_object() || !json.contains("cells") || !json["cells"].is_array()) {
    return Status::Error(path + ": not an experiment written by hvdrun-lab run (no list of \"cells\")");
  }
  ExperimentResults results;
  results.dir = dir;
  JsonFields experiment(json, path);
  results.name = experiment.Text("name", fs::path(dir).filename().string());
  results.description = experiment.Text("description", "");
  results.experiment_file = experiment.Text("experiment_file", "");
  results.repeats = static_cast<int>(experiment.Whole("repeats", 1, kMaxRepeats, 1));
  results.excluded = static_cast<int>(experiment.Whole("excluded", 0, kMaxCombinations, 0));
  ReadFiguresAndOptions(experiment, results);
  const nlohmann::json& axes = experiment.List("axes");
  for (size_t i = 0; i < axes.size(); ++i) {
    JsonFields axis = experiment.Element("axes", axes[i], i);
    results.axes.push_back(StoredAxis{axis.Text("name", ""), axis.TextList("values")});
  }
  const nlohmann::json& cells = experiment.List("cells");
  if (cells.size() > kMaxCombinations || static_cast<int64_t>(cells.size()) * results.repeats > kMaxRuns) {
    experiment.Fail(experiment.Name("cells"),
                    "lists " + std::to_string(cells.size()) + " cells of " + std::to_string(results.repeats) +
                        " runs each; hvdrun-lab run makes at most " + std::to_string(kMaxCombinations) +
                        " cells and " + std::to_string(kMaxRuns) + " runs");
  }
  for (size_t i = 0; i < cells.size() && experiment.ok(); ++i) {
    JsonFields cell = experiment.Element("cells", cells[i], i);
    std::optional<Cell> read = ReadCell(cell, path, results.problems);
    if (read) results.cells.push_back(StoredCell{std::move(*read), {}});
  }
  if (!experiment.ok()) return experiment.status();
  return results;
}

StatusOr<ExperimentResults> LoadExperimentResults(const std::string& dir) {
  const std::string experiment_path = dir + "/experiment.json";
  StatusOr<std::string> text = ReadWholeFile(experiment_path, kMaxJsonFileBytes);
  if (!text.ok()) {
    return Status::Error(text.status().message() + " (is '" + dir +
                         "' a directory that hvdrun-lab run wrote?)");
  }
  StatusOr<nlohmann::json> json = ParseJson(text.value(), experiment_path);
  if (!json.ok()) return json.status();
  StatusOr<ExperimentResults> results = ExperimentResultsFromJson(json.value(), dir);
  if (!results.ok()) return results.status();
  RunStore store(dir);
  for (StoredCell& stored : results->cells) {
    for (int repeat = 1; repeat <= results->repeats; ++repeat) {
      std::optional<RunRecord> record = store.FindRun(stored.cell.id, repeat);
      if (!record) continue;
      stored.runs.push_back(
          ReadRun(store.RunDir(stored.cell.id, repeat), repeat, *record, results->problems));
    }
  }
  ReadEnvironment(dir, results.value());
  return results;
}

}  // namespace hvdrun::lab
