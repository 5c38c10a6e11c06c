// RankState: what hvdrun knows of one rank's progress at one moment, the launcher's own view of the
// progress its agents report (filled from each agent's latest report; tests make it by hand). The
// stall inspector (stall_inspector.h) and the failure report's blame read it; nothing here is sent.
#ifndef HVDRUN_LAUNCHER_STALL_RANK_STATE_H_
#define HVDRUN_LAUNCHER_STALL_RANK_STATE_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/protocol/agent_protocol.h"

namespace hvdrun {

using StallClock = std::chrono::steady_clock;

// The rank's process as its host sees it (/proc).
enum class RankProcess {
  kUnknown,  // no report yet
  kRunning,  // running or sleeping: alive
  kStopped,  // stopped by a signal (SIGSTOP, SIGTSTP, a debugger)
  kZombie,   // exited, not yet reaped
  kExited,   // gone
};

// One collective the rank is in (submitted, and not yet done).
struct PendingCollective {
  std::string name{};
  std::string op{};    // "allreduce", "broadcast", ...; empty when unknown
  uint64_t bytes = 0;  // 0 when unknown
};

struct RankState {
  int rank = 0;
  std::string host{};
  int pid = 0;
  bool reported = false;  // a progress report arrived; the fields below mean nothing before
  RankProcess process = RankProcess::kUnknown;
  int stop_signal = 0;                       // with kStopped: the signal, when known; 0 otherwise
  uint64_t completed = 0;                    // collectives the rank has completed since it started
  std::string last_completed{};              // the name of its last completed collective; empty before one
  std::vector<PendingCollective> pending{};  // submitted and waiting, in submission order
  // The rank is inside the backend (every rank submitted; the data moves) with this collective.
  bool in_backend = false;
  PendingCollective backend{};
  // How long the rank has been in its current state, by its own report: the process stopped, or
  // inside the backend, or (neither) since it last submitted or completed anything.
  std::chrono::milliseconds state_age{0};
  // The rank's flight recorder (its last collectives, oldest first), when this report carries it.
  std::vector<protocol::FlightRecord> recorder{};
};

// The launcher's view of an agent's report, heard at `now_unix_ms` (hvdrun's clock; ages are
// measured against it, and a host clock ahead of it gives age 0).
RankState RankStateFromProgress(const protocol::RankProgress& progress, int64_t now_unix_ms);

// "4 MiB", "512 B", "1.5 KiB": a size in the largest binary unit it reaches, one decimal at most.
std::string SizeText(uint64_t bytes);

// The rank's state in words, for the stall warning, SIGUSR1's answer and the failure report:
// "stopped by SIGSTOP 61 s ago; last completed 'grad.layer4.1.conv2' (812 done)",
// "busy in user code for 75 s (running, has not submitted 'x'); last completed ...",
// "inside the backend in allreduce 'x' (4 MiB) for 70 s; last completed ...".
// `awaited`: a tensor others wait for and this rank has not submitted ("" when none).
std::string DescribeRankState(const RankState& state, const std::string& awaited);

// "rank 1 (host b, pid 4242)".
std::string RankLabel(const RankState& state);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_STALL_RANK_STATE_H_
