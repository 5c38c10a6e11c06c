// hvdrun-lab: experiment matrices run through hvdrun, and their reports.
//   hvdrun-lab run EXPERIMENT.yaml [--results DIR] [--force] [--slurm]
//   hvdrun-lab report DIR [--out DIR]
//   hvdrun-lab validate EXPERIMENT.yaml [--slurm]
//   hvdrun-lab sbatch EXPERIMENT.yaml [--time T] [--output FILE] [--partition P] [--results DIR] [--force]
// docs/lab.md describes the experiment file, the results directory, the report and the exit codes.
#include <sys/ioctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "common/env_names.h"
#include "common/error_text.h"
#include "common/shell_words.h"
#include "common/version.h"
#include "lab/experiment/experiment_config.h"
#include "lab/experiment/matrix.h"
#include "lab/host_facts.h"
#include "lab/report/report_writer.h"
#include "lab/run/experiment_runner.h"
#include "lab/run/interrupt_signals.h"
#include "lab/run/slurm_job.h"
#include "lab/store/experiment_results.h"

namespace hvdrun::lab {
namespace {

// The directory hvdrun-lab is installed in: hvdrun and the bundled programs are looked for there
// first, so that a build tree or a non-standard prefix works without PATH changes.
std::string SelfDir() {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? "" : self.parent_path().string();
}

std::string HvdrunPath(const std::string& self_dir) {
  std::filesystem::path beside = std::filesystem::path(self_dir) / "hvdrun";
  if (!self_dir.empty() && ::access(beside.c_str(), X_OK) == 0) return beside.string();
  return "hvdrun";
}

// Every error of hvdrun-lab is one line: control characters of the values it quotes (a file's keys,
// a flag's value) are shown as '?', never written to the terminal as they are.
int Fail(int code, const std::string& message) {
  std::cerr << "hvdrun-lab: " << OneLineText(message) << "\n";
  return code;
}

const char* Getenv(const char* name) { return std::getenv(name); }

// Loads and expands the experiment, on the Slurm allocation ChooseSlurmAllocation picks (`slurm_flag`:
// --slurm); prints the error and returns nullopt when it is invalid.
std::optional<std::pair<ExperimentConfig, Matrix>> Prepare(const std::string& path, const HostFacts& local,
                                                           bool slurm_flag) {
  StatusOr<ExperimentConfig> config = LoadExperiment(path);
  if (!config.ok()) {
    Fail(kLabExitUsage, config.status().message());
    return std::nullopt;
  }
  MachineFacts machine = MachineFactsOf(local);
  StatusOr<std::optional<SlurmAllocation>> slurm = ChooseSlurmAllocation(config.value(), slurm_flag, Getenv);
  if (!slurm.ok()) {
    Fail(kLabExitUsage, slurm.status().message());
    return std::nullopt;
  }
  machine.slurm = std::move(slurm).value();
  StatusOr<Matrix> matrix = ExpandMatrix(config.value(), machine);
  if (!matrix.ok()) {
    Fail(kLabExitUsage, matrix.status().message());
    return std::nullopt;
  }
  if (matrix->cells.empty()) {
    Fail(kLabExitUsage, path + ": every combination of the matrix is excluded; nothing to run");
    return std::nullopt;
  }
  if (machine.slurm) {
    std::cout << "hvdrun-lab: inside Slurm job " << machine.slurm->job_id << ": the cells run on its nodes ("
              << env::kSlurmJobNodeList << "='" << machine.slurm->node_list
              << "'), each on the first it needs, through srun\n";
  }
  return std::make_pair(std::move(config).value(), std::move(matrix).value());
}

int Validate(const std::string& path, bool slurm) {
  HostFacts local = ProbeLocalHost();
  auto prepared = Prepare(path, local, slurm);
  if (!prepared) return kLabExitUsage;
  const auto& [config, matrix] = *prepared;
  const std::string program = ResolveProgram(config, SelfDir());
  std::cout << "hvdrun-lab: " << path << " is valid: experiment '" << config.name << "', "
            << matrix.cells.size() << " cells (" << matrix.excluded << " combinations excluded), "
            << config.repeats << (config.repeats == 1 ? " run" : " runs") << " each\n";
  for (const Cell& cell : matrix.cells) {
    std::cout << "  " << cell.id << "\n";
    if (!cell.skip_reason.empty()) {
      std::cout << "    skipped: " << cell.skip_reason << "\n";
      continue;
    }
    std::vector<std::string> line = {"hvdrun"};
    for (const std::string& arg : HvdrunArguments(cell, program, "RUN_DIR/hvdrun", "RUN_DIR/logs")) {
      line.push_back(arg);
    }
    // As sh reads it back, on one line.
    std::cout << "    " << OneLineText(ShellJoin(line)) << "\n";
  }
  return kLabExitOk;
}

int Run(const std::string& path, const std::string& results, bool force, bool slurm) {
  if (!InstallInterruptHandlers()) {
    return Fail(kLabExitSetup, std::string("cannot handle signals: ") + std::strerror(errno));
  }
  HostFacts local = ProbeLocalHost();
  auto prepared = Prepare(path, local, slurm);
  if (!prepared) return kLabExitUsage;
  const auto& [config, matrix] = *prepared;
  const std::string self_dir = SelfDir();
  ExperimentRunOptions options;
  options.results_root = results;
  options.force = force;
  options.hvdrun = HvdrunPath(self_dir);
  options.program = ResolveProgram(config, self_dir);
  options.experiment_text = config.text;
  options.local_facts = local;
  const char* term = std::getenv("TERM");
  options.terminal = ::isatty(STDOUT_FILENO) == 1 && (term == nullptr || std::strcmp(term, "dumb") != 0);
  winsize size{};
  if (options.terminal && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0) {
    options.terminal_width = size.ws_col;
  }
  options.interrupts = PendingInterrupts;
  return RunExperiment(config, matrix, options, std::cout, std::cerr);
}

std::string Absolute(const std::string& path) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(path, error);
  return error ? path : absolute.lexically_normal().string();
}

int Sbatch(const std::string& path, SbatchOptions options) {
  StatusOr<ExperimentConfig> config = LoadExperiment(path);
  if (!config.ok()) return Fail(kLabExitUsage, config.status().message());
  if (!options.time_limit.empty()) {
    if (Status status = CheckSlurmTimeLimit(options.time_limit); !status.ok()) {
      return Fail(kLabExitUsage, status.message());
    }
  }
  MachineFacts machine;
  machine.slurm = AllocationForSubmission(config.value());
  StatusOr<Matrix> matrix = ExpandMatrix(config.value(), machine);
  if (!matrix.ok()) return Fail(kLabExitUsage, matrix.status().message());
  if (matrix->cells.empty()) {
    return Fail(kLabExitUsage, path + ": every combination of the matrix is excluded; nothing to run");
  }
  const std::string self_dir = SelfDir();
  options.lab_path = self_dir.empty() ? "hvdrun-lab" : self_dir + "/hvdrun-lab";
  options.experiment_path = Absolute(path);
  options.results = Absolute(options.results);
  StatusOr<std::string> script = BuildSbatchScript(config.value(), matrix.value(), options);
  if (!script.ok()) return Fail(kLabExitUsage, script.status().message());
  std::cout << script.value();
  return kLabExitOk;
}

int ReportOne(const std::string& dir, std::string out_dir) {
  StatusOr<ExperimentResults> results = LoadExperimentResults(dir);
  if (!results.ok()) return Fail(kLabExitSetup, results.status().message());
  ReportTables tables = BuildReportTables(results.value(), ProbeLocalHost);
  if (out_dir.empty()) out_dir = dir;
  StatusOr<std::vector<std::string>> written = WriteReport(results.value(), tables, out_dir);
  if (!written.ok()) return Fail(kLabExitSetup, written.status().message());
  std::string names;
  for (const std::string& name : written.value()) names += (names.empty() ? "" : ", ") + name;
  std::cout << "hvdrun-lab: " << tables.speedup.size() << " cells in the speedup table; wrote " << names
            << " in " << out_dir << "\n";
  for (const std::string& problem : results->problems) {
    std::cerr << "hvdrun-lab: could not read " << OneLineText(problem) << "\n";
  }
  return kLabExitOk;
}

// DIR is an experiment's results directory, or one that holds several (what `run --results DIR`
// fills): then each is reported, into its own directory (or OUT/<name>).
int Report(const std::string& dir, const std::string& out_dir) {
  std::error_code error;
  if (std::filesystem::exists(std::filesystem::path(dir) / "experiment.json", error)) {
    return ReportOne(dir, out_dir);
  }
  std::vector<std::string> found = FindExperimentDirs(dir);
  if (found.empty()) {
    if (!std::filesystem::is_directory(dir, error)) {
      return Fail(kLabExitSetup,
                  "cannot read results directory '" + dir + "': " +
                      (std::filesystem::exists(dir, error) ? "not a directory" : "no such directory"));
    }
    return Fail(kLabExitSetup,
                "'" + dir +
                    "' holds no experiment: neither it nor a directory in it has an "
                    "experiment.json; give the directory `hvdrun-lab run` named (RESULTS/<name>)");
  }
  std::string names;
  for (const std::string& path : found) {
    names += (names.empty() ? "" : ", ") + std::filesystem::path(path).filename().string();
  }
  std::cout << "hvdrun-lab: " << dir << " holds " << found.size()
            << (found.size() == 1 ? " experiment: " : " experiments: ") << names
            << "; reporting each (one alone: hvdrun-lab report " << found.front() << ")\n";
  int code = kLabExitOk;
  for (const std::string& path : found) {
    const std::string out =
        out_dir.empty() ? ""
                        : (std::filesystem::path(out_dir) / std::filesystem::path(path).filename()).string();
    if (int one = ReportOne(path, out); one != kLabExitOk) code = one;
  }
  return code;
}

// A flag's value: never empty, and never one that looks like a flag, so that a flag whose value is
// missing does not take the next flag as its value (`--results --force`).
CLI::Validator FlagValue(const char* what) {
  return CLI::Validator(
      [what](std::string& value) -> std::string {
        if (value.empty()) return std::string("the value is empty; give ") + what;
        if (value[0] == '-') {
          return "'" + value + "' looks like a flag, not " + what + " (write one that starts with '-' as ./" +
                 value + ")";
        }
        return "";
      },
      "", "");
}

// The command line as parsed: the command chosen and every value.
struct CommandLine {
  CLI::App app{"hvdrun-lab: experiment matrices run through hvdrun, and their speedup reports (docs/lab.md)",
               "hvdrun-lab"};
  CLI::App* run = nullptr;
  CLI::App* report = nullptr;
  CLI::App* validate = nullptr;
  CLI::App* sbatch = nullptr;
  std::string experiment;
  std::string results = "results";
  bool force = false;
  bool slurm = false;
  std::string dir;
  std::string out_dir;
  SbatchOptions sbatch_options;
};

void DeclareCommands(CommandLine& line) {
  CLI::App& app = line.app;
  app.set_version_flag("--version", std::string("hvdrun-lab ") + kVersion);
  app.require_subcommand(0, 1);
  app.allow_extras();
  const char* slurm_help =
      "Run the cells on the nodes of the Slurm allocation this runs in (the first S nodes for a cell on S "
      "servers), in place of the experiment's hosts; the default inside an allocation for an experiment "
      "that names no hosts";
  line.run = app.add_subcommand("run", "Run every cell of EXPERIMENT through hvdrun, keeping complete runs");
  line.run->add_option("experiment", line.experiment, "The experiment file (YAML)");
  line.run->add_option("--results", line.results, "Where the experiment's directory goes (default: results)")
      ->check(FlagValue("a directory"));
  line.run->add_flag("--force", line.force, "Make every run again, even those complete from before");
  line.run->add_flag("--slurm", line.slurm, slurm_help);
  line.report = app.add_subcommand("report", "Write report.md, report.html, CSV, JSON and SVG charts of DIR");
  line.report->add_option(
      "dir", line.dir,
      "An experiment's results directory (RESULTS/<name>), or RESULTS itself: each experiment in it");
  line.report
      ->add_option("--out", line.out_dir,
                   "Where to write the report (default: DIR; OUT/<name> for each of several)")
      ->check(FlagValue("a directory"));
  line.validate = app.add_subcommand("validate", "Check EXPERIMENT and list its cells and commands");
  line.validate->add_option("experiment", line.experiment, "The experiment file (YAML)");
  line.validate->add_flag("--slurm", line.slurm, slurm_help);
  SbatchOptions& sbatch = line.sbatch_options;
  sbatch.results = line.results;
  line.sbatch = app.add_subcommand(
      "sbatch", "Print an sbatch script that runs EXPERIMENT in one Slurm job (hvdrun-lab run --slurm)");
  line.sbatch->add_option("experiment", line.experiment, "The experiment file (YAML)");
  line.sbatch
      ->add_option("--time", sbatch.time_limit,
                   "The job's time limit, as sbatch takes it (minutes, HH:MM:SS, D-HH:MM:SS); default: the "
                   "partition's")
      ->check(FlagValue("a time limit"));
  line.sbatch
      ->add_option("--output", sbatch.output,
                   "The job's output file (default: NAME-%j.out, in the directory sbatch is run in)")
      ->check(FlagValue("a file"));
  line.sbatch->add_option("--partition", sbatch.partition, "The partition (default: the cluster's)")
      ->check(FlagValue("a partition"));
  line.sbatch
      ->add_option("--results", sbatch.results,
                   "Where `run` puts the experiment's directory (default: results, made absolute)")
      ->check(FlagValue("a directory"));
  line.sbatch->add_flag("--force", sbatch.force, "`run --force`: make every run again");
  for (CLI::App* command : {line.run, line.report, line.validate, line.sbatch}) command->allow_extras();
}

// What CLI11 found wrong with the command line, in hvdrun-lab's words: the flag, the value, what is
// expected. `command` is the command being parsed ("" before one is named).
std::string ParseErrorText(const CLI::ParseError& error, const std::string& command) {
  const std::string what = error.what();
  const std::string help = " (see hvdrun-lab " + (command.empty() ? "" : command + " ") + "--help)";
  const size_t colon = what.find(": ");
  const std::string flag = colon == std::string::npos ? "" : what.substr(0, colon);
  if (dynamic_cast<const CLI::ValidationError*>(&error) != nullptr) return what + help;
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr && !flag.empty()) {
    if (what.find("missing") != std::string::npos) return flag + ": the value is missing" + help;
    if (what.find("received") != std::string::npos) return flag + " is given more than once" + help;
  }
  return "the command line is not valid: " + what + help;
}

// The words left over once CLI11 has taken every flag and value it knows, and the experiment file
// or directory each command needs, checked; "" when the command line is complete.
std::string CheckCommandLine(const CommandLine& line) {
  const CLI::App* chosen = nullptr;
  for (const CLI::App* command : {line.run, line.report, line.validate, line.sbatch}) {
    if (command->parsed()) chosen = command;
  }
  std::vector<std::string> extras = line.app.remaining();
  if (chosen == nullptr) {
    if (extras.empty()) return "give a command: run, report, validate or sbatch (see hvdrun-lab --help)";
    return "'" + extras.front() +
           "' is not a command (run, report, validate or sbatch; see hvdrun-lab --help)";
  }
  const std::string name = chosen->get_name();
  for (const std::string& extra : chosen->remaining()) extras.push_back(extra);
  if (!extras.empty()) {
    const bool flag = extras.front().size() > 1 && extras.front()[0] == '-';
    return name + ": " + (flag ? "unknown flag '" : "unexpected argument '") + extras.front() +
           "' (see hvdrun-lab " + name + " --help)";
  }
  if (chosen == line.report && line.dir.empty()) {
    return "report: give the results directory: hvdrun-lab report DIR (see hvdrun-lab report --help)";
  }
  if (chosen != line.report && line.experiment.empty()) {
    return name + ": give the experiment file: hvdrun-lab " + name + " EXPERIMENT.yaml (see hvdrun-lab " +
           name + " --help)";
  }
  return "";
}

int Main(int argc, char** argv) {
  CommandLine line;
  DeclareCommands(line);
  try {
    line.app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return line.app.exit(error);
    std::string command;
    for (const CLI::App* sub : {line.run, line.report, line.validate, line.sbatch}) {
      if (sub->parsed()) command = sub->get_name();
    }
    return Fail(kLabExitUsage, ParseErrorText(error, command));
  }
  if (std::string problem = CheckCommandLine(line); !problem.empty()) return Fail(kLabExitUsage, problem);
  if (line.run->parsed()) return Run(line.experiment, line.results, line.force, line.slurm);
  if (line.report->parsed()) return Report(line.dir, line.out_dir);
  if (line.sbatch->parsed()) return Sbatch(line.experiment, line.sbatch_options);
  return Validate(line.experiment, line.slurm);
}

}  // namespace
}  // namespace hvdrun::lab

int main(int argc, char** argv) {
  try {
    return hvdrun::lab::Main(argc, argv);
  } catch (const std::exception& error) {
    std::cerr << "hvdrun-lab: " << error.what() << "\n";
    return hvdrun::lab::kLabExitSetup;
  }
}
