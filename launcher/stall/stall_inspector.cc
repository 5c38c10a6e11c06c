#include "launcher/stall/stall_inspector.h"

#include <algorithm>

#include "common/error_text.h"

namespace hvdrun {
namespace {

// Tensor names a warning shows before "and N more" (Horovod shows about six).
constexpr size_t kNamesShown = 6;

bool Holds(const RankState& state, const std::string& name) {
  if (state.in_backend && state.backend.name == name) return true;
  return std::any_of(state.pending.begin(), state.pending.end(),
                     [&](const PendingCollective& c) { return c.name == name; });
}

bool Alive(const RankState& state) { return state.reported && state.process == RankProcess::kRunning; }

// Has submitted something it is not done with, and is not stopped: waits (or waited, until it ended).
bool Waits(const RankState& state) {
  return state.reported && state.process != RankProcess::kStopped &&
         (state.in_backend || !state.pending.empty());
}

// Every name some rank has submitted, in the order first seen (rank order, then submission order).
std::vector<std::string> SubmittedNames(const std::vector<RankState>& states) {
  std::vector<std::string> names;
  auto add = [&](const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const RankState& state : states) {
    if (state.in_backend) add(state.backend.name);
    for (const PendingCollective& collective : state.pending) add(collective.name);
  }
  return names;
}

std::string NameList(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size() && i < kNamesShown; ++i) {
    text += (i > 0 ? ", '" : "'") + OneLineText(names[i]) + "'";
  }
  if (names.size() > kNamesShown) text += " and " + std::to_string(names.size() - kNamesShown) + " more";
  return text;
}

std::string RankList(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

// The missing ranks, the waiting ranks and the cause, for kStuckInBackend: the ranks that are
// not alive inside the backend hold the others up; when every rank is inside, none stands out.
void BlameInsideBackend(const std::vector<RankState>& states, StallFinding& finding) {
  for (const RankState& state : states) {
    if (Alive(state) && state.in_backend) {
      finding.waiting_ranks.push_back(state.rank);
      if (std::find(finding.tensors.begin(), finding.tensors.end(), state.backend.name) ==
          finding.tensors.end()) {
        finding.tensors.push_back(state.backend.name);
      }
    } else {
      finding.missing_ranks.push_back(state.rank);
    }
  }
  if (finding.missing_ranks.empty()) finding.missing_ranks.swap(finding.waiting_ranks);
}

// The tensors submitted by some ranks and not others (`partial`), and for each rank the one of them
// it lacks that the most ranks hold (`awaited`, "" for none). A rank is missing when it lacks a
// partial tensor held by at least as many ranks as any partial tensor it holds: where the ranks
// diverge (rank 1 skipped 'a' and waits in 'b', which the others have not reached), the rank
// that went its own way is missing and the others wait for it; an even split names both sides.
void FindMissingRanks(const std::vector<RankState>& states, std::vector<std::string>& partial,
                      std::vector<std::string>& awaited, std::vector<bool>& missing) {
  std::vector<size_t> holders;
  for (const std::string& name : SubmittedNames(states)) {
    const auto count = static_cast<size_t>(std::count_if(
        states.begin(), states.end(), [&](const RankState& state) { return Holds(state, name); }));
    if (count == states.size()) continue;
    partial.push_back(name);
    holders.push_back(count);
  }
  for (const RankState& state : states) {
    size_t lacked = 0;
    size_t held = 0;
    for (size_t i = 0; i < partial.size(); ++i) {
      if (Holds(state, partial[i])) {
        held = std::max(held, holders[i]);
      } else if (holders[i] > lacked) {
        lacked = holders[i];
        awaited[state.rank] = partial[i];
      }
    }
    missing[state.rank] = lacked > 0 && lacked >= held;
  }
}

}  // namespace

const char* StallKindName(StallKind kind) {
  return kind == StallKind::kStuckInBackend ? "stuck in backend" : "stall";
}

StallInspector::StallInspector(StallSettings settings, int ranks, StallClock::time_point start)
    : settings_(settings), states_(ranks), last_advance_(ranks, start), heard_(ranks, start) {
  for (int rank = 0; rank < ranks; ++rank) states_[rank].rank = rank;
}

void StallInspector::Update(const RankState& state, StallClock::time_point now) {
  if (state.rank < 0 || state.rank >= static_cast<int>(states_.size())) return;
  RankState& known = states_[state.rank];
  if (state.reported && (!known.reported || state.completed != known.completed)) {
    last_advance_[state.rank] = now;
  }
  known = state;
  heard_[state.rank] = now;
}

std::vector<RankState> StallInspector::StatesAt(StallClock::time_point now) const {
  std::vector<RankState> states = states_;
  for (RankState& state : states) {
    if (state.reported && now > heard_[state.rank]) {
      state.state_age += std::chrono::duration_cast<std::chrono::milliseconds>(now - heard_[state.rank]);
    }
  }
  return states;
}

std::optional<StallFinding> StallInspector::Explain(StallClock::time_point now) const {
  return Find(now, std::chrono::milliseconds(0));
}

std::optional<StallFinding> StallInspector::Find(StallClock::time_point now,
                                                 std::chrono::milliseconds at_least) const {
  std::optional<StallClock::time_point> began;
  for (const RankState& state : states_) {
    if (!Waits(state)) continue;
    if (!began || last_advance_[state.rank] < *began) began = last_advance_[state.rank];
  }
  if (!began || now - *began < at_least) return std::nullopt;
  const std::vector<RankState> states = StatesAt(now);
  StallFinding finding;
  finding.stalled_for = std::chrono::duration_cast<std::chrono::milliseconds>(now - *began);
  std::vector<std::string> awaited(states.size());  // the partial tensor most ranks hold that each lacks
  std::vector<bool> missing(states.size(), false);
  FindMissingRanks(states, finding.tensors, awaited, missing);
  if (finding.tensors.empty()) {
    finding.kind = StallKind::kStuckInBackend;
    BlameInsideBackend(states, finding);
  } else {
    for (const RankState& state : states) {
      if (missing[state.rank]) finding.missing_ranks.push_back(state.rank);
      if (Waits(state) && !missing[state.rank]) finding.waiting_ranks.push_back(state.rank);
    }
  }
  for (int rank : finding.missing_ranks) {
    const RankState& state = states[rank];
    finding.rank_lines.push_back(RankLabel(state) + ": " + DescribeRankState(state, awaited[rank]));
    if (finding.cause_rank < 0 && !Alive(state)) finding.cause_rank = rank;
  }
  const bool every_rank_inside = finding.waiting_ranks.empty();
  if (finding.cause_rank < 0 && !(finding.kind == StallKind::kStuckInBackend && every_rank_inside)) {
    finding.cause_rank = finding.missing_ranks.front();
  }
  if (finding.cause_rank >= 0) {
    finding.cause_state = DescribeRankState(states[finding.cause_rank], awaited[finding.cause_rank]);
    finding.cause_alive = Alive(states[finding.cause_rank]);
  }
  return finding;
}

StallInspector::Action StallInspector::Check(StallClock::time_point now) {
  Action action;
  if (!settings_.enabled) return action;
  finding_ = Find(now, settings_.check_time);
  if (!finding_) {
    last_warning_.reset();
    shutdown_asked_ = false;
    return action;
  }
  if (!last_warning_ || now - *last_warning_ >= settings_.check_time) {
    action.warn = true;
    last_warning_ = now;
    last_warned_ = finding_;
  }
  const auto shutdown = settings_.shutdown_time;
  if (shutdown.count() > 0 && shutdown >= settings_.check_time && finding_->stalled_for >= shutdown &&
      !shutdown_asked_) {
    action.shut_down = true;
    shutdown_asked_ = true;
    last_warned_ = finding_;
  }
  return action;
}

std::string StallInspector::ShutdownIgnoredNote() const {
  if (!settings_.enabled || settings_.shutdown_time.count() == 0 ||
      settings_.shutdown_time >= settings_.check_time) {
    return "";
  }
  return "--stall-check-shutdown-time-seconds " + std::to_string(settings_.shutdown_time.count()) +
         " is below the stall check time (" + std::to_string(settings_.check_time.count()) +
         " s): no stall shutdown";
}

std::string FormatStallWarning(const StallFinding& finding, const StallSettings& settings) {
  const std::string stalled =
      DurationText(std::chrono::duration_cast<std::chrono::seconds>(finding.stalled_for));
  std::string text = "hvdrun: stall: no collective completed for " + stalled + "; ";
  if (finding.kind == StallKind::kMissingRanks) {
    text += std::to_string(finding.tensors.size()) +
            (finding.tensors.size() == 1 ? " tensor was" : " tensors were") +
            " submitted by some ranks and not others: " + NameList(finding.tensors) + "\n";
    if (!finding.waiting_ranks.empty()) text += "  waiting: " + RankList(finding.waiting_ranks) + "\n";
    text += "  missing " + RankList(finding.missing_ranks) + ":\n";
  } else {
    text +=
        "every rank submitted " + NameList(finding.tensors) + ", which has not finished inside the backend\n";
    if (!finding.waiting_ranks.empty()) {
      text += "  inside the backend: " + RankList(finding.waiting_ranks) + "\n";
    }
    text += "  holding it up:\n";
  }
  for (const std::string& line : finding.rank_lines) text += "    " + line + "\n";
  if (settings.shutdown_time.count() > 0 && settings.shutdown_time >= settings.check_time) {
    text += "  the job ends when stalled for " + DurationText(settings.shutdown_time) +
            " (--stall-check-shutdown-time-seconds)\n";
  }
  return text;
}

}  // namespace hvdrun
