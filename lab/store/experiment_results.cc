#include "lab/store/experiment_results.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <string_view>

#include "common/version.h"
#include "common/whole_number.h"
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

// Parses the JSON file at `path`; a problem is added and null returned when it cannot be.
nlohmann::json ReadJson(const std::string& path, std::vector<std::string>& problems) {
  StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) {
    problems.push_back(text.status().message());
    return nullptr;
  }
  nlohmann::json json = nlohmann::json::parse(text.value(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    problems.push_back(path + ": not valid JSON");
    return nullptr;
  }
  return json;
}

template <typename T>
T Member(const nlohmann::json& json, const char* key, T fallback) {
  if (!json.is_object()) return fallback;
  auto it = json.find(key);
  if (it == json.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;
  }
}

std::optional<double> NumberMember(const nlohmann::json& json, const char* key) {
  if (!json.is_object() || !json.contains(key) || !json[key].is_number()) return std::nullopt;
  return json[key].get<double>();
}

RankReport ReadRankReport(int rank, const nlohmann::json& report) {
  RankReport read;
  read.rank = rank;
  const nlohmann::json summary = Member<nlohmann::json>(report, "summary", nlohmann::json::object());
  for (const auto& item : summary.items()) {
    if (item.value().is_number()) read.figures[item.key()] = item.value().get<double>();
  }
  if (std::optional<double> threads = NumberMember(report, "threads"); threads && *threads >= 1) {
    read.threads = static_cast<int>(*threads);
  }
  read.framework = Member<std::string>(report, "framework", "");
  std::string version = Member<std::string>(report, "framework_version", "");
  if (!read.framework.empty() && !version.empty()) read.framework += " " + version;
  const nlohmann::json results_list = Member<nlohmann::json>(report, "results", nlohmann::json::array());
  for (const nlohmann::json& entry : results_list) {
    std::optional<double> bytes = NumberMember(entry, "bytes");
    std::optional<double> time_us = NumberMember(entry, "time_us");
    if (!bytes || !time_us) continue;
    AllreduceSize size;
    size.bytes = *bytes;
    size.time_us = *time_us;
    size.busbw_gbps = NumberMember(entry, "busbw_gbps");
    read.sizes.push_back(size);
  }
  const nlohmann::json libhvdrun = Member<nlohmann::json>(report, "libhvdrun", nlohmann::json::object());
  read.allreduce_path = Member<std::string>(report, "allreduce_path", "");
  if (read.allreduce_path.empty()) read.allreduce_path = Member<std::string>(libhvdrun, "allreduce_path", "");
  const nlohmann::json responses = Member<nlohmann::json>(libhvdrun, "responses", nlohmann::json::object());
  for (const nlohmann::json& entry : Member<nlohmann::json>(responses, "bins", nlohmann::json::array())) {
    std::optional<double> lower = NumberMember(entry, "lower_bytes");
    std::optional<double> upper = NumberMember(entry, "upper_bytes");
    std::optional<double> count = NumberMember(entry, "responses");
    std::optional<double> bytes = NumberMember(entry, "bytes");
    std::optional<double> seconds = NumberMember(entry, "seconds");
    if (!lower || !upper || !count || !bytes || !seconds) continue;
    read.responses.push_back(
        ResponseBin{*lower, *upper, *count, NumberMember(entry, "tensors").value_or(0), *bytes, *seconds});
  }
  return read;
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
    nlohmann::json plan = ReadJson(hvdrun_dir + "/plan.json", problems);
    const nlohmann::json hosts = Member<nlohmann::json>(plan, "hosts", nlohmann::json::array());
    for (const nlohmann::json& host : hosts) {
      std::string name = Member<std::string>(host, "host", "");
      if (!name.empty()) run.plan_hosts.push_back(name);
    }
  }
  std::vector<std::pair<int, std::string>> rank_files;
  for (const fs::directory_entry& entry : fs::directory_iterator(hvdrun_dir + "/ranks", error)) {
    const std::string name = entry.path().filename().string();
    const std::string_view file = name;
    constexpr std::string_view kPrefix = "rank-";
    constexpr std::string_view kSuffix = ".json";
    if (!file.starts_with(kPrefix) || !file.ends_with(kSuffix)) continue;
    const ParsedWholeNumber rank =
        ParseWholeNumber(file.substr(kPrefix.size(), file.size() - kPrefix.size() - kSuffix.size()), 0,
                         std::numeric_limits<int>::max());
    if (rank.ok()) rank_files.emplace_back(static_cast<int>(rank.value), entry.path().string());
  }
  std::sort(rank_files.begin(), rank_files.end());
  for (const auto& [rank, path] : rank_files) {
    nlohmann::json report = ReadJson(path, problems);
    if (report.is_null()) continue;
    run.ranks.push_back(ReadRankReport(rank, report));
  }
  std::vector<std::string> host_files;
  for (const fs::directory_entry& entry : fs::directory_iterator(hvdrun_dir + "/hosts", error)) {
    if (entry.path().extension() == ".json") host_files.push_back(entry.path().string());
  }
  std::sort(host_files.begin(), host_files.end());
  for (const std::string& path : host_files) {
    nlohmann::json json = ReadJson(path, problems);
    if (json.is_null()) continue;
    std::string label = fs::relative(path, run_dir, error).string();
    StatusOr<HostFacts> facts = HostFactsFromJson(json, label);
    if (!facts.ok()) {
      problems.push_back(path + ": " + facts.status().message());
      continue;
    }
    run.host_facts.emplace_back(path, facts.value());
  }
  return run;
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

StatusOr<ExperimentResults> LoadExperimentResults(const std::string& dir) {
  ExperimentResults results;
  results.dir = dir;
  const std::string experiment_path = dir + "/experiment.json";
  StatusOr<std::string> text = ReadWholeFile(experiment_path);
  if (!text.ok()) {
    return Status::Error(text.status().message() + " (is '" + dir +
                         "' a directory that hvdrun-lab run wrote?)");
  }
  nlohmann::json experiment = nlohmann::json::parse(text.value(), nullptr, /*allow_exceptions=*/false);
  if (!experiment.is_object() || !experiment.contains("cells") || !experiment["cells"].is_array()) {
    return Status::Error(experiment_path + ": not an experiment written by hvdrun-lab run");
  }
  results.name = Member<std::string>(experiment, "name", fs::path(dir).filename().string());
  results.description = Member<std::string>(experiment, "description", "");
  results.experiment_file = Member<std::string>(experiment, "experiment_file", "");
  results.repeats = Member<int>(experiment, "repeats", 1);
  results.excluded = Member<int>(experiment, "excluded", 0);
  const nlohmann::json figures = Member<nlohmann::json>(experiment, "figures", nlohmann::json::object());
  FigureNames& names = results.figures;
  names.step_time = Member<std::string>(figures, "step_time", names.step_time);
  names.step_time_scale = Member<double>(figures, "step_time_scale", names.step_time_scale);
  names.throughput = Member<std::string>(figures, "throughput", names.throughput);
  names.throughput_unit = Member<std::string>(figures, "throughput_unit", names.throughput_unit);
  names.accuracy = Member<std::string>(figures, "accuracy", names.accuracy);
  names.training_time = Member<std::string>(figures, "training_time", names.training_time);
  const nlohmann::json hvdrun_options =
      Member<nlohmann::json>(experiment, "hvdrun_options", nlohmann::json::object());
  for (const auto& item : hvdrun_options.items()) {
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
  const nlohmann::json axes = Member<nlohmann::json>(experiment, "axes", nlohmann::json::array());
  for (const nlohmann::json& axis : axes) {
    StoredAxis stored;
    stored.name = Member<std::string>(axis, "name", "");
    stored.values = Member<std::vector<std::string>>(axis, "values", {});
    results.axes.push_back(stored);
  }
  RunStore store(dir);
  for (const nlohmann::json& json : experiment["cells"]) {
    StoredCell stored;
    Cell& cell = stored.cell;
    cell.id = Member<std::string>(json, "id", "");
    if (cell.id.empty() || cell.id.find('/') != std::string::npos || cell.id[0] == '.') {
      results.problems.push_back(experiment_path + ": a cell without a valid id");
      continue;
    }
    const nlohmann::json values = Member<nlohmann::json>(json, "values", nlohmann::json::array());
    for (const nlohmann::json& pair : values) {
      if (pair.is_array() && pair.size() == 2 && pair[0].is_string() && pair[1].is_string()) {
        cell.values.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
      }
    }
    cell.backend = Member<std::string>(json, "backend", "");
    cell.num_proc = Member<int>(json, "np", 1);
    cell.servers = Member<int>(json, "servers", 1);
    cell.procs_per_server = Member<int>(json, "procs_per_server", cell.num_proc);
    cell.skip_reason = Member<std::string>(json, "skip_reason", "");
    for (int repeat = 1; repeat <= results.repeats; ++repeat) {
      std::optional<RunRecord> record = store.FindRun(cell.id, repeat);
      if (!record) continue;
      stored.runs.push_back(ReadRun(store.RunDir(cell.id, repeat), repeat, *record, results.problems));
    }
    results.cells.push_back(std::move(stored));
  }
  std::error_code error;
  if (fs::exists(dir + "/environment.json", error)) {
    nlohmann::json environment = ReadJson(dir + "/environment.json", results.problems);
    std::string probed_at = Member<std::string>(environment, "probed_at", "");
    std::string host = Member<std::string>(environment, "host", "this machine");
    results.environment_note = "environment.json: read by hvdrun-lab run on " + host +
                               (probed_at.empty() ? "" : " at " + probed_at) + ".";
    const nlohmann::json slurm = Member<nlohmann::json>(environment, "slurm", nlohmann::json::object());
    results.slurm.job_id = Member<std::string>(slurm, "job_id", "");
    results.slurm.node_list = Member<std::string>(slurm, "node_list", "");
    results.slurm.tasks_per_node = Member<std::string>(slurm, "tasks_per_node", "");
    StatusOr<HostFacts> facts = HostFactsFromJson(environment, "environment.json");
    if (facts.ok()) results.environment = facts.value();
  }
  return results;
}

}  // namespace hvdrun::lab
