#include "launcher/results/failure_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "common/exit_codes.h"

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

}  // namespace

int ExitCodeOf(const RankOutcome& outcome) {
  if (!outcome.exited) return 1;
  if (outcome.exit.signal != 0) return 128 + outcome.exit.signal;
  return outcome.exit.exit_code;
}

std::string FormatFailureReport(const std::vector<RankOutcome>& ranks, int first_failure,
                                const OutputRouter& output) {
  const RankOutcome& first = ranks.at(first_failure);
  std::ostringstream report;
  report << "hvdrun: rank " << first.rank << " on host " << first.host << " failed first (";
  if (!first.lost_reason.empty()) {
    report << first.lost_reason;
  } else if (first.exit.signal != 0) {
    report << "killed by " << SignalName(first.exit.signal);
  } else {
    report << "exit code " << first.exit.exit_code;
  }
  report << ")";
  bool any_stopped =
      std::any_of(ranks.begin(), ranks.end(), [](const RankOutcome& o) { return o.stopped_by_hvdrun; });
  if (any_stopped) report << "; hvdrun stopped the other ranks";
  report << ".\n";

  report << "  " << Pad("RANK", 6) << Pad("HOST", 18) << Pad("PID", 9) << Pad("STATUS", 12) << Pad("NOTE", 18)
         << "LAST STDERR LINE\n";
  // Rows left for failed ranks and for the others once the first failure has its row.
  const auto failed = [&](const RankOutcome& o) {
    return o.rank != first_failure && o.Failed() && !o.stopped_by_hvdrun;
  };
  size_t failed_rows = std::min<size_t>(kMaxRows - 1, std::count_if(ranks.begin(), ranks.end(), failed));
  size_t other_rows = kMaxRows - 1 - failed_rows;
  size_t hidden_failed = 0;
  size_t hidden = 0;
  for (const RankOutcome& outcome : ranks) {
    if (outcome.rank != first_failure) {
      size_t& rows = failed(outcome) ? failed_rows : other_rows;
      if (rows == 0) {
        ++(failed(outcome) ? hidden_failed : hidden);
        continue;
      }
      --rows;
    }
    std::string note = outcome.rank == first_failure ? "first failure"
                       : outcome.stopped_by_hvdrun   ? "stopped by hvdrun"
                       : outcome.Failed()            ? "failed"
                                                     : "";
    std::vector<std::string> tail = output.StderrTail(outcome.rank);
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

  std::vector<std::string> tail = output.StderrTail(first.rank);
  if (!tail.empty()) {
    report << "last stderr lines of rank " << first.rank << ":\n";
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
                 const OutputRouter& output) {
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
    std::fputs(FormatFailureReport(ranks, first_failure, output).c_str(), stderr);
    return ExitCodeOf(first);
  }
  if (interrupt_signal != 0) {
    std::fprintf(stderr, "hvdrun: stopped by %s\n", SignalName(interrupt_signal).c_str());
    return 128 + interrupt_signal;
  }
  return 0;
}

}  // namespace hvdrun
