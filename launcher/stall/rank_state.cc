#include "launcher/stall/rank_state.h"

#include <chrono>
#include <cstdio>

#include "common/error_text.h"
#include "common/process/wait_status.h"

namespace hvdrun {
namespace {

// Whole seconds read better than milliseconds in a report of minutes-long states.
std::string AgeText(std::chrono::milliseconds age) {
  if (age >= std::chrono::seconds(1)) {
    return DurationText(std::chrono::duration_cast<std::chrono::seconds>(age));
  }
  return DurationText(age);
}

std::string CollectiveText(const PendingCollective& collective) {
  std::string text = collective.op.empty() ? "" : collective.op + " ";
  text += QuotedOneLine(collective.name);
  if (collective.bytes > 0) text += " (" + SizeText(collective.bytes) + ")";
  return text;
}

std::string ActivityText(const RankState& state, const std::string& awaited) {
  const std::string age = AgeText(state.state_age);
  switch (state.process) {
    case RankProcess::kUnknown:
      return "no progress report yet";
    case RankProcess::kStopped:
      return "stopped by " +
             (state.stop_signal != 0 ? SignalName(state.stop_signal) : std::string("a signal")) + " " + age +
             " ago";
    case RankProcess::kZombie:
      return "exited (not yet reaped by its agent)";
    case RankProcess::kExited:
      return "exited";
    case RankProcess::kRunning:
      break;
  }
  if (state.in_backend) return "inside the backend in " + CollectiveText(state.backend) + " for " + age;
  if (!state.pending.empty()) {
    std::string text = "waiting in " + CollectiveText(state.pending.front());
    if (state.pending.size() > 1) text += " and " + std::to_string(state.pending.size() - 1) + " more";
    text += " for " + age;
    if (!awaited.empty()) text += " (has not submitted " + QuotedOneLine(awaited) + ")";
    return text;
  }
  std::string text = "busy in user code for " + age + " (running";
  if (!awaited.empty()) text += ", has not submitted " + QuotedOneLine(awaited);
  return text + ")";
}

RankProcess ProcessOf(protocol::ProcessState state) {
  switch (state) {
    case protocol::ProcessState::kRunning:
    case protocol::ProcessState::kSleeping:
    case protocol::ProcessState::kDiskWait:
      return RankProcess::kRunning;
    case protocol::ProcessState::kStopped:
    case protocol::ProcessState::kTraced:
      return RankProcess::kStopped;
    case protocol::ProcessState::kZombie:
      return RankProcess::kZombie;
    case protocol::ProcessState::kExited:
      return RankProcess::kExited;
    case protocol::ProcessState::kUnknown:
      break;
  }
  return RankProcess::kUnknown;
}

}  // namespace

RankState RankStateFromProgress(const protocol::RankProgress& progress, int64_t now_unix_ms) {
  RankState state;
  state.rank = progress.rank;
  state.pid = progress.pid;
  state.reported = true;
  state.process = ProcessOf(progress.state);
  state.stop_signal = progress.stop_signal;
  state.completed = progress.completed;
  state.last_completed = progress.last_completed_name;
  // What it waits for: the oldest collective it has submitted, and any later one its recorder shows.
  auto add_pending = [&](const std::string& name, const std::string& op, uint64_t bytes) {
    for (const PendingCollective& known : state.pending) {
      if (known.name == name) return;
    }
    state.pending.push_back({.name = name, .op = op, .bytes = bytes});
  };
  if (progress.pending > 0 && !progress.oldest_pending_name.empty()) {
    add_pending(progress.oldest_pending_name, "", 0);
  }
  for (const protocol::FlightRecord& record : progress.records) {
    if (record.phase != protocol::CollectivePhase::kDone &&
        record.phase != protocol::CollectivePhase::kFailed) {
      add_pending(record.name, record.op, record.bytes);
    }
  }
  state.in_backend = progress.in_backend;
  state.backend = {.name = progress.backend_name, .op = progress.backend_op, .bytes = progress.backend_bytes};
  int64_t since = progress.state_since_unix_ms;
  if (state.process == RankProcess::kRunning) {
    if (progress.in_backend) {
      since = progress.backend_since_unix_ms;
    } else if (progress.pending > 0) {
      since = progress.oldest_pending_since_unix_ms;
    } else if (progress.last_completed_unix_ms > 0) {
      since = progress.last_completed_unix_ms;
    }
  }
  if (since > 0 && now_unix_ms > since) state.state_age = std::chrono::milliseconds(now_unix_ms - since);
  state.recorder = progress.records;
  return state;
}

std::string SizeText(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0 || value >= 100 || value == static_cast<double>(static_cast<uint64_t>(value))) {
    std::snprintf(text, sizeof(text), "%.0f %s", value, kUnits[unit]);
  } else {
    std::snprintf(text, sizeof(text), "%.1f %s", value, kUnits[unit]);
  }
  return text;
}

std::string DescribeRankState(const RankState& state, const std::string& awaited) {
  std::string text = ActivityText(state, awaited);
  if (!state.reported) return text;
  if (state.last_completed.empty()) return text + "; no collective completed yet";
  return text + "; last completed " + QuotedOneLine(state.last_completed) + " (" +
         std::to_string(state.completed) + " done)";
}

std::string RankLabel(const RankState& state) {
  std::string label = "rank " + std::to_string(state.rank) + " (host " + state.host;
  if (state.pid > 0) label += ", pid " + std::to_string(state.pid);
  return label + ")";
}

}  // namespace hvdrun
