#include "launcher/results/failure_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "common/error_text.h"
#include "common/exit_codes.h"
#include "launcher/results/job_problem.h"

namespace hvdrun {
namespace {

// Rows shown in the table; a bigger job shows its first failure, then failed ranks before the
// others, up to this many, and counts the rest.
constexpr size_t kMaxRows = 32;
constexpr size_t kStderrColumnWidth = 60;

std::string StatusText(const RankOutcome& outcome) {
  if (!outcome.lost_reason.empty()) return "lost";
  if (!outcome.exited) return "running";
  if (outcome.exit.spawn_error != protocol::SpawnError::kNone) return "not started";
  if (outcome.exit.signal != 0) return SignalName(outcome.exit.signal);
  return "exit " + std::to_string(outcome.exit.exit_code);
}

std::string Clip(const std::string& text, size_t width) {
  std::string clean;
  for (char c : text) clean.push_back(c == '\t' ? ' ' : c);
  return clean.size() <= width ? clean : clean.substr(0, width - 3) + "...";
}

std::string Pad(const std::string& text, size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

std::string RanksText(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

int ProcessOf(const RankOutcome& outcome) { return outcome.process >= 0 ? outcome.process : outcome.rank; }

// The problem blames a rank other than the first failure (or there is no first failure).
bool BlamesAnother(const JobProblem* problem, int first_failure) {
  return problem != nullptr &&
         (problem->shut_down || (problem->kind != "rank died" && problem->rank != first_failure));
}

std::string Headline(const std::vector<RankOutcome>& ranks, int first_failure, const JobProblem* problem) {
  const bool any_stopped =
      std::any_of(ranks.begin(), ranks.end(), [](const RankOutcome& o) { return o.stopped_by_hvdrun; });
  std::string line = "hvdrun: ";
  if (BlamesAnother(problem, first_failure)) {
    if (problem->shut_down) {
      line += "the job stalled for " +
              DurationText(std::chrono::duration_cast<std::chrono::seconds>(problem->stalled_for)) +
              " and hvdrun ended it (--stall-check-shutdown-time-seconds): ";
    }
    if (problem->rank >= 0) {
      const RankOutcome& cause = ranks.at(problem->rank);
      line += "rank " + std::to_string(cause.rank) + " on host " + cause.host + " stopped progressing (" +
              problem->state + ")";
    } else {
      line += "every rank is inside the backend with '" +
              (problem->tensors.empty() ? "" : problem->tensors[0]) + "'";
    }
    if (first_failure >= 0) {
      line += "; rank " + std::to_string(first_failure) + " failed first, waiting for it (" +
              EndText(ranks.at(first_failure)) + ")";
    } else if (!problem->waiting.empty() && problem->rank >= 0) {
      line += "; " + RanksText(problem->waiting) + " waited for it";
    }
  } else {
    const RankOutcome& first = ranks.at(first_failure);
    line += "rank " + std::to_string(first.rank) + " on host " + first.host + " failed first (" +
            EndText(first) + ")";
  }
  if (any_stopped) line += "; hvdrun stopped the other ranks";
  return line + ".";
}

std::string Note(const RankOutcome& outcome, int first_failure, const JobProblem* problem) {
  if (BlamesAnother(problem, first_failure) && problem->rank >= 0) {
    if (outcome.rank == problem->rank) return "stalled (cause)";
    if (std::find(problem->waiting.begin(), problem->waiting.end(), outcome.rank) != problem->waiting.end() ||
        outcome.rank == first_failure) {
      return "waiting for rank " + std::to_string(problem->rank);
    }
  }
  if (outcome.rank == first_failure) return "first failure";
  if (outcome.stopped_by_hvdrun) return "stopped by hvdrun";
  return outcome.Failed() ? "failed" : "";
}

}  // namespace

std::string EndText(const RankOutcome& outcome) {
  if (!outcome.lost_reason.empty()) return outcome.lost_reason;
  if (outcome.exit.signal != 0) return "killed by " + SignalName(outcome.exit.signal);
  return "exit code " + std::to_string(outcome.exit.exit_code);
}

int ExitCodeOf(const RankOutcome& outcome) {
  if (!outcome.exited) return 1;
  if (outcome.exit.signal != 0) return 128 + outcome.exit.signal;
  return outcome.exit.exit_code;
}

std::string FormatFailureReport(const std::vector<RankOutcome>& ranks, int first_failure,
                                const OutputRouter& output, const JobProblem* problem) {
  std::ostringstream report;
  report << Headline(ranks, first_failure, problem) << "\n";
  report << "  " << Pad("RANK", 6) << Pad("HOST", 18) << Pad("PID", 9) << Pad("STATUS", 12) << Pad("NOTE", 18)
         << "LAST STDERR LINE\n";
  // Rows left for failed ranks and for the others once the first failure (or the rank blamed) has
  // its row.
  const int pinned = first_failure >= 0 ? first_failure : problem != nullptr ? problem->rank : -1;
  const auto failed = [&](const RankOutcome& o) {
    return o.rank != pinned && o.Failed() && !o.stopped_by_hvdrun;
  };
  size_t failed_rows = std::min<size_t>(kMaxRows - 1, std::count_if(ranks.begin(), ranks.end(), failed));
  size_t other_rows = kMaxRows - 1 - failed_rows;
  size_t hidden_failed = 0;
  size_t hidden = 0;
  for (const RankOutcome& outcome : ranks) {
    if (outcome.rank != pinned) {
      size_t& rows = failed(outcome) ? failed_rows : other_rows;
      if (rows == 0) {
        ++(failed(outcome) ? hidden_failed : hidden);
        continue;
      }
      --rows;
    }
    std::string note = Note(outcome, first_failure, problem);
    std::vector<std::string> tail = output.StderrTail(ProcessOf(outcome));
    std::string last = tail.empty() ? "" : Clip(tail.back(), kStderrColumnWidth);
    std::string row = "  " + Pad(std::to_string(outcome.rank), 6) + Pad(Clip(outcome.host, 17), 18) +
                      Pad(outcome.pid > 0 ? std::to_string(outcome.pid) : "-", 9) +
                      Pad(StatusText(outcome), 12) + Pad(note, 18) + last;
    row.erase(row.find_last_not_of(' ') + 1);
    report << row << "\n";
  }
  if (hidden_failed > 0) {
    report << "  ... and " << hidden_failed << " more ranks that failed (" << ranks.size() << " in all)\n";
  }
  if (hidden > 0) report << "  ... and " << hidden << " more ranks that exited normally or were stopped\n";

  std::vector<std::string> tail =
      pinned >= 0 ? output.StderrTail(ProcessOf(ranks.at(pinned))) : std::vector<std::string>{};
  if (!tail.empty()) {
    report << "last stderr lines of rank " << pinned << ":\n";
    for (const std::string& line : tail) report << "  " << line << "\n";
  }
  return report.str();
}

int ChooseFirstFailure(const std::vector<RankOutcome>& ranks, bool interrupted) {
  auto earlier = [](const RankOutcome& a, const RankOutcome& b) {
    if (a.end_unix_ns != 0 && b.end_unix_ns != 0) return a.end_unix_ns < b.end_unix_ns;
    return a.heard < b.heard;
  };
  auto earliest = [&](auto&& eligible) {
    const RankOutcome* best = nullptr;
    for (const RankOutcome& outcome : ranks) {
      if (!outcome.Failed() || !eligible(outcome)) continue;
      if (best == nullptr || earlier(outcome, *best)) best = &outcome;
    }
    return best != nullptr ? best->rank : -1;
  };
  int first = earliest([](const RankOutcome& o) { return !o.stop_requested; });
  if (first < 0 && !interrupted) first = earliest([](const RankOutcome& o) { return !o.stopped_by_hvdrun; });
  return first;
}

int ReportJobEnd(const std::vector<RankOutcome>& ranks, int first_failure, int interrupt_signal,
                 const OutputRouter& output, const JobProblem* problem) {
  if (problem != nullptr && problem->shut_down) {
    std::fputs(FormatFailureReport(ranks, first_failure, output, problem).c_str(), stderr);
    return kExitStall;
  }
  if (first_failure >= 0) {
    const RankOutcome& first = ranks.at(first_failure);
    if (first.exited && first.exit.spawn_error != protocol::SpawnError::kNone) {
      int others = static_cast<int>(std::count_if(ranks.begin(), ranks.end(), [&](const RankOutcome& o) {
        return o.rank != first.rank && o.exited && o.exit.spawn_error != protocol::SpawnError::kNone;
      }));
      std::string more;
      if (others > 0) {
        more = " (and " + std::to_string(others) + (others == 1 ? " more rank" : " more ranks") +
               " could not start)";
      }
      std::fprintf(stderr, "hvdrun: rank %d on host %s: %s%s\n", first.rank, first.host.c_str(),
                   first.exit.error.c_str(), more.c_str());
      switch (first.exit.spawn_error) {
        case protocol::SpawnError::kNotExecutable:
          return kExitNotExecutable;
        case protocol::SpawnError::kNotFound:
        case protocol::SpawnError::kWorkingDir:
          return kExitNotFound;
        default:
          return kExitLaunchFailure;  // fork or pipe failure on the host
      }
    }
    std::fputs(FormatFailureReport(ranks, first_failure, output, problem).c_str(), stderr);
    return ExitCodeOf(first);
  }
  if (interrupt_signal != 0) {
    std::fprintf(stderr, "hvdrun: stopped by %s\n", SignalName(interrupt_signal).c_str());
    return 128 + interrupt_signal;
  }
  return 0;
}

}  // namespace hvdrun
