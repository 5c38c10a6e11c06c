#include "lab/run/cell_runner.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "common/atomic_file.h"
#include "common/error_text.h"
#include "common/process/process_spawner.h"
#include "common/process/wait_status.h"
#include "common/shell_words.h"
#include "lab/json_file.h"
#include "lab/store/rank_report.h"
#include "lab/utc_time.h"
#include "lab/whole_file.h"

namespace hvdrun::lab {
namespace {

constexpr std::chrono::milliseconds kPollInterval{100};
// Where, inside a run's directory, hvdrun writes (relative: hvdrun runs in the run's directory).
constexpr const char* kHvdrunResults = "hvdrun";
constexpr const char* kRankLogs = "logs";
// The most of hvdrun's stderr.log read for its last `hvdrun:` line.
constexpr size_t kMaxLogBytes = size_t{64} << 20;

// hvdrun's line that says why it failed: its last `hvdrun:` line other than the figures' heading.
std::string HvdrunErrorLine(const std::string& stderr_path) {
  StatusOr<std::string> text = ReadWholeFile(stderr_path, kMaxLogBytes);
  if (!text.ok()) return "";
  std::istringstream lines(text.value());
  std::string line;
  std::string found;
  while (std::getline(lines, line)) {
    if (line.rfind("hvdrun: ", 0) == 0 && line.find(" ranks reported") == std::string::npos) found = line;
  }
  return found;
}

}  // namespace

std::vector<std::string> RunArguments(const Cell& cell, const std::string& program) {
  return HvdrunArguments(cell, program, kHvdrunResults, kRankLogs);
}

std::string CheckReports(const std::string& hvdrun_results_dir, int num_proc, const std::string& step_time) {
  std::vector<int> missing;
  for (int rank = 0; rank < num_proc; ++rank) {
    std::string path = hvdrun_results_dir + "/ranks/rank-" + std::to_string(rank) + ".json";
    StatusOr<std::string> text = ReadWholeFile(path, kMaxJsonFileBytes);
    if (!text.ok()) {
      missing.push_back(rank);
      continue;
    }
    StatusOr<nlohmann::json> parsed = ParseJson(text.value(), path);
    if (!parsed.ok()) {
      return "rank " + std::to_string(rank) + "'s report cannot be read: " + parsed.status().message();
    }
    // What the report reads of it must be in range, or the run would count and its report not.
    if (StatusOr<RankReport> read = RankReportFromJson(rank, parsed.value(), path); !read.ok()) {
      return "rank " + std::to_string(rank) + "'s report cannot be read: " + read.status().message();
    }
    const nlohmann::json& report = parsed.value();
    const nlohmann::json* summary = nullptr;
    if (report.is_object() && report.contains("summary") && report.at("summary").is_object()) {
      summary = &report.at("summary");
    }
    if (summary == nullptr) {
      return "rank " + std::to_string(rank) + "'s report has no \"summary\" object of figures";
    }
    auto figure = summary->find(step_time);
    if (figure == summary->end() || !figure->is_number()) {
      std::string names;
      for (const auto& item : summary->items()) names += (names.empty() ? "" : ", ") + item.key();
      return "rank " + std::to_string(rank) + "'s report has no figure '" + step_time +
             "' (it has: " + (names.empty() ? "none" : names) + "); set figures.step_time in the experiment";
    }
  }
  if (missing.empty()) return "";
  return RankListText(missing, 8) + " of " + std::to_string(num_proc) +
         " sent no report (does the program report through libhvdrun?)";
}

StatusOr<RunOutcome> CellRunner::Run(const Cell& cell, int repeat) {
  StatusOr<std::string> run_dir = store_.BeginRun(cell.id, repeat);
  if (!run_dir.ok()) return run_dir.status();
  RunRecord record;
  record.started_at = UtcNow(UtcFormat::kIso8601);
  record.command = RunArguments(cell, options_.program);
  const auto start = std::chrono::steady_clock::now();
  StatusOr<ChildProcess> hvdrun = StartHvdrun(cell, run_dir.value(), record.command);
  if (!hvdrun.ok()) {
    store_.DiscardRun(cell.id, repeat);
    return hvdrun.status();
  }
  const HvdrunEnding ending = WaitForHvdrun(hvdrun.value(), start);
  record.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (ending.interrupted_by != 0) {
    store_.DiscardRun(cell.id, repeat);
    RunOutcome outcome;
    outcome.interrupted = true;
    outcome.signal = ending.interrupted_by;
    return outcome;
  }
  record.timed_out = ending.timed_out;
  record.exit_code = WIFEXITED(ending.wait_status) ? WEXITSTATUS(ending.wait_status) : -1;
  record.error = RunError(cell, run_dir.value(), record, ending.wait_status);
  record.ok = record.error.empty();
  if (Status status = store_.CommitRun(cell.id, repeat, record); !status.ok()) return status;
  RunOutcome outcome;
  outcome.record = record;
  return outcome;
}

StatusOr<ChildProcess> CellRunner::StartHvdrun(const Cell& cell, const std::string& run_dir,
                                               const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {options_.hvdrun};
  argv.insert(argv.end(), args.begin(), args.end());
  nlohmann::json values = nlohmann::json::object();
  for (const auto& [name, value] : cell.values) values[name] = value;
  nlohmann::json command = {
      {"argv", argv}, {"working_dir", "the run's directory"}, {"shell", ShellJoin(argv)}, {"cell", values}};
  if (Status status = WriteFileAtomically(run_dir + "/command.json", JsonFileText(command)); !status.ok()) {
    return status;
  }
  // hvdrun leads a process group of its own, so that a Ctrl-C at the terminal reaches only
  // hvdrun-lab, which passes it on; it gets SIGTERM when hvdrun-lab dies (and stops its ranks).
  SpawnOptions child_options;
  child_options.argv = argv;
  child_options.working_dir = run_dir;
  child_options.stdout_spec = StdioSpec::File(run_dir + "/stdout.log");
  child_options.stderr_spec = StdioSpec::File(run_dir + "/stderr.log");
  child_options.own_process_group = true;
  child_options.parent_death_signal = SIGTERM;
  return SpawnProcess(child_options);
}

CellRunner::HvdrunEnding CellRunner::WaitForHvdrun(ChildProcess& hvdrun,
                                                   std::chrono::steady_clock::time_point start) const {
  HvdrunEnding ending;
  int forwarded = 0;         // interrupts passed on to hvdrun
  int forwarded_status = 0;  // SIGUSR1s passed on
  InterruptRequest interrupt;
  std::optional<std::chrono::steady_clock::time_point> stop_began;
  bool killed = false;
  std::optional<int> wait_status;
  while (!(wait_status = hvdrun.Poll())) {
    const auto now = std::chrono::steady_clock::now();
    interrupt = options_.interrupts();
    if (interrupt.count > forwarded) {
      // Each signal hvdrun-lab gets goes on to hvdrun: a second SIGINT makes it kill at once.
      hvdrun.Signal(interrupt.signal);
      forwarded = interrupt.count;
      if (!stop_began) stop_began = now;
    }
    if (interrupt.status_requests > forwarded_status) {
      // hvdrun prints its ranks' states on its stderr (the run's stderr.log); the run goes on.
      hvdrun.Signal(SIGUSR1);
      forwarded_status = interrupt.status_requests;
    }
    if (!ending.timed_out && !stop_began && now - start >= options_.timeout) {
      ending.timed_out = true;
      hvdrun.Signal(SIGTERM);
      stop_began = now;
    }
    if (stop_began && !killed && now - *stop_began >= options_.stop_grace) {
      hvdrun.KillGroup();
      killed = true;
    }
    options_.on_tick();
    ::usleep(static_cast<useconds_t>(std::chrono::microseconds(kPollInterval).count()));
  }
  ending.wait_status = *wait_status;
  if (forwarded > 0) ending.interrupted_by = interrupt.signal;
  return ending;
}

std::string CellRunner::RunError(const Cell& cell, const std::string& run_dir, const RunRecord& record,
                                 int wait_status) const {
  if (record.timed_out) {
    std::ostringstream seconds;
    seconds << std::chrono::duration<double>(options_.timeout).count();
    return "timed out after " + seconds.str() + " s (the experiment's timeout); hvdrun was stopped";
  }
  if (record.exit_code != 0) {
    std::string why = HvdrunErrorLine(run_dir + "/stderr.log");
    return "hvdrun ended with " + DescribeWaitStatus(wait_status) + (why.empty() ? "" : ": " + why);
  }
  return CheckReports(run_dir + "/" + kHvdrunResults, cell.num_proc, options_.figures.step_time);
}

}  // namespace hvdrun::lab
