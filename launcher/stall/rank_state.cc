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

std::string Quoted(const std::string& name) { return "'" + OneLineText(name) + "'"; }

std::string CollectiveText(const PendingCollective& collective) {
  std::string text = collective.op.empty() ? "" : collective.op + " ";
  text += Quoted(collective.name);
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
    if (!awaited.empty()) text += " (has not submitted " + Quoted(awaited) + ")";
    return text;
  }
  std::string text = "busy in user code for " + age + " (running";
  if (!awaited.empty()) text += ", has not submitted " + Quoted(awaited);
  return text + ")";
}

}  // namespace

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
  return text + "; last completed " + Quoted(state.last_completed) + " (" + std::to_string(state.completed) +
         " done)";
}

std::string RankLabel(const RankState& state) {
  std::string label = "rank " + std::to_string(state.rank) + " (host " + state.host;
  if (state.pid > 0) label += ", pid " + std::to_string(state.pid);
  return label + ")";
}

}  // namespace hvdrun
