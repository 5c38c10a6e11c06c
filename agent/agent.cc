#include "agent/agent.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "agent/descendants.h"
#include "agent/rank_spawner.h"
#include "common/env_names.h"
#include "common/exit_codes.h"
#include "common/host/free_port.h"
#include "common/host/host_facts.h"
#include "common/host/network_interfaces.h"
#include "common/process/signal_watch.h"
#include "common/process/wait_status.h"
#include "common/version.h"

namespace hvdrun {
namespace {

// Longest piece of a line forwarded in one RankOutput; longer lines travel in pieces.
constexpr size_t kMaxLinePiece = size_t{64} * 1024;
constexpr size_t kReadChunk = size_t{64} * 1024;
// Reads per stream per poll round while the rank runs, so one chatty rank cannot starve others.
constexpr int kReadsPerRound = 16;
// How often every running rank's RankProgress is sent.
constexpr std::chrono::milliseconds kProgressPeriod{1000};

// A directory only this user can enter, for the ranks' progress boards; empty when none can be made.
std::string MakeBoardDirectory() {
  std::error_code error;
  std::string pattern =
      (std::filesystem::temp_directory_path(error) / "hvdrun-agent-progress.XXXXXX").string();
  if (error || ::mkdtemp(pattern.data()) == nullptr) {
    std::fprintf(stderr,
                 "hvdrun-agent: cannot create a directory for the ranks' progress boards (%s); "
                 "their progress is not reported\n",
                 std::strerror(errno));
    return "";
  }
  return pattern;
}

std::string HostName() {
  const char* node = std::getenv(env::kSlurmdNodeName);
  if (node != nullptr && *node != '\0') return node;
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

int MillisUntil(std::chrono::steady_clock::time_point now, std::chrono::steady_clock::time_point when) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(when - now).count();
  return static_cast<int>(std::clamp<int64_t>(ms, 0, 60'000));
}

}  // namespace

Agent::Agent(UniqueFd control_in, UniqueFd control_out)
    : control_in_(std::move(control_in)), control_out_(std::move(control_out)) {}

int Agent::Run() {
  StatusOr<std::unique_ptr<SignalWatch>> signals = WatchProcessSignals();
  // Orphaned descendants of the ranks become the agent's children, so that it can reap them and
  // knows when the last one is gone.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  if (!signals.ok()) {
    Fail(signals.status().message());
    Flush();
    return exit_code_;
  }
  signals_ = std::move(signals).value();
  SetNonBlocking(control_in_.get());
  last_heard_ = last_sent_ = Clock::now();

  while (!((launcher_gone_ || stop_signal_ != 0) && RunningRanks() == 0)) {
    std::vector<PolledFd> polled = PolledFds();
    std::vector<pollfd> fds;
    fds.reserve(polled.size());
    for (const PolledFd& entry : polled) fds.push_back({entry.fd, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), PollTimeoutMs());
    if (ready < 0 && errno != EINTR) {
      Fail(std::string("poll failed: ") + std::strerror(errno));
      break;
    }
    for (size_t i = 0; ready > 0 && i < fds.size(); ++i) {
      if (fds[i].revents != 0) HandleReady(polled[i]);
    }
    KeepDeadlines();
    Flush();
  }
  Flush();
  KillAndReapDescendants(kDescendantsWait, "hvdrun-agent");
  if (!board_dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(board_dir_, ignored);
  }
  return exit_code_;
}

std::vector<Agent::PolledFd> Agent::PolledFds() const {
  std::vector<PolledFd> polled;
  polled.reserve(2 + 2 * ranks_.size());
  polled.push_back({signals_->fd(), nullptr, protocol::OutputStream::kStdout});
  if (!launcher_gone_) polled.push_back({control_in_.get(), nullptr, protocol::OutputStream::kStdout});
  for (const auto& rank : ranks_) {
    if (rank->out_fd.valid()) {
      polled.push_back({rank->out_fd.get(), rank.get(), protocol::OutputStream::kStdout});
    }
    if (rank->err_fd.valid()) {
      polled.push_back({rank->err_fd.get(), rank.get(), protocol::OutputStream::kStderr});
    }
  }
  return polled;
}

int Agent::PollTimeoutMs() const {
  const Clock::time_point now = Clock::now();
  int timeout = 60'000;
  if (terminating_ && !killed_) timeout = std::min(timeout, MillisUntil(now, kill_deadline_));
  if (!launcher_gone_ && hello_done_ && heartbeat_interval_.count() > 0) {
    timeout = std::min(timeout, MillisUntil(now, last_sent_ + heartbeat_interval_));
  }
  if (!launcher_gone_ && heartbeat_timeout_.count() > 0) {
    timeout = std::min(timeout, MillisUntil(now, last_heard_ + heartbeat_timeout_));
  }
  if (!launcher_gone_ && !ranks_.empty()) timeout = std::min(timeout, MillisUntil(now, next_progress_));
  return timeout;
}

void Agent::HandleReady(const PolledFd& polled) {
  if (polled.rank != nullptr) {
    DrainOutput(*polled.rank, polled.stream);
  } else if (polled.fd == control_in_.get()) {
    HandleControlInput();
  } else {
    HandleSignals();
  }
}

void Agent::HandleSignals() {
  for (const ReceivedSignal& received : signals_->Take()) {
    if (received.number == SIGCHLD || stop_signal_ != 0) continue;
    stop_signal_ = received.number;
    std::fprintf(stderr, "hvdrun-agent: %s received; stopping all ranks\n", SignalName(stop_signal_).c_str());
    exit_code_ = 128 + stop_signal_;
    StartTermination();
  }
  ReapChildren();
}

void Agent::KeepDeadlines() {
  const Clock::time_point now = Clock::now();
  if (terminating_ && !killed_ && now >= kill_deadline_) KillRemaining();
  if (!launcher_gone_ && heartbeat_timeout_.count() > 0 && now - last_heard_ >= heartbeat_timeout_) {
    std::fprintf(stderr, "hvdrun-agent: the launcher sent nothing for %lld ms; stopping all ranks\n",
                 static_cast<long long>(heartbeat_timeout_.count()));
    exit_code_ = kExitLaunchFailure;
    launcher_gone_ = true;
    StartTermination();
  }
  if (!launcher_gone_ && !ranks_.empty() && now >= next_progress_) {
    next_progress_ = now + kProgressPeriod;
    SendProgress(/*with_records=*/false);
  }
  if (!launcher_gone_ && hello_done_ && heartbeat_interval_.count() > 0 &&
      now - last_sent_ >= heartbeat_interval_) {
    Send(protocol::Heartbeat{});
  }
}

void Agent::HandleControlInput() {
  char buffer[kReadChunk];
  ssize_t n = ::read(control_in_.get(), buffer, sizeof(buffer));
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    // The launcher closed the stream or died: the job is over for this host.
    launcher_gone_ = true;
    StartTermination();
    return;
  }
  last_heard_ = Clock::now();
  decoder_.Append(std::string_view(buffer, static_cast<size_t>(n)));
  while (!launcher_gone_) {
    StatusOr<std::optional<protocol::Message>> next = decoder_.Next();
    if (!next.ok()) {
      Fail("protocol error from the launcher: " + next.status().message());
      return;
    }
    if (!next.value().has_value()) return;
    HandleMessage(std::move(*next.value()));
  }
}

void Agent::HandleMessage(protocol::Message message) {
  if (auto* hello = std::get_if<protocol::Hello>(&message)) {
    HandleHello(*hello);
  } else if (!hello_done_) {
    Fail("the launcher sent " + std::string(protocol::MessageName(message)) + " before Hello");
  } else if (auto* launch = std::get_if<protocol::Launch>(&message)) {
    HandleLaunch(*launch);
  } else if (auto* terminate = std::get_if<protocol::Terminate>(&message)) {
    StartTermination();
    if (terminate->immediate) KillRemaining();
  } else if (std::holds_alternative<protocol::Heartbeat>(message)) {
    // last_heard_ is refreshed by every read.
  } else if (auto* request = std::get_if<protocol::ProgressRequest>(&message)) {
    SendProgress(request->with_recorder);
  } else {
    Fail("the launcher sent an agent's message: " + std::string(protocol::MessageName(message)));
  }
}

void Agent::HandleHello(const protocol::Hello& hello) {
  if (hello_done_) {
    Fail("the launcher sent a second Hello");
    return;
  }
  hello_done_ = true;
  heartbeat_interval_ = std::chrono::milliseconds(hello.heartbeat_interval_ms);
  heartbeat_timeout_ = std::chrono::milliseconds(hello.heartbeat_timeout_ms);
  // The answer carries our versions whatever the launcher's are: the launcher compares them and
  // reports a mismatch with the host's name, which only it knows as the user wrote it.
  protocol::AgentHello reply;
  reply.hvdrun_version = kVersion;
  reply.hostname = HostName();
  reply.pid = static_cast<int32_t>(::getpid());
  reply.free_port = FindFreePort();
  if (hello.want_facts) {
    reply.facts = ProbeHostFacts();
    reply.facts.push_back({"hvdrun_agent", std::string("hvdrun-agent ") + kVersion, "built in"});
  }
  reply.interfaces = ListInterfaceAddresses();
  Send(reply);
}

void Agent::HandleLaunch(const protocol::Launch& launch) {
  if (terminating_) {
    Fail("the launcher sent Launch after Terminate");
    return;
  }
  // Every message about a process names it by its rank number: a number this agent has used
  // before (whether its process still runs or not) would make two processes one.
  for (size_t i = 0; i < launch.ranks.size(); ++i) {
    const int32_t number = launch.ranks[i].rank;
    const bool used =
        std::any_of(ranks_.begin(), ranks_.end(), [&](const auto& r) { return r->rank == number; }) ||
        std::any_of(launch.ranks.begin(), launch.ranks.begin() + static_cast<ptrdiff_t>(i),
                    [&](const protocol::RankLaunch& r) { return r.rank == number; });
    if (used) {
      Fail("the launcher sent Launch for rank " + std::to_string(number) +
           ", which this agent already started");
      return;
    }
  }
  kill_grace_ = std::chrono::milliseconds(launch.kill_grace_ms);
  next_progress_ = Clock::now() + kProgressPeriod;
  if (board_dir_.empty()) board_dir_ = MakeBoardDirectory();  // one for every Launch of the job
  for (protocol::RankLaunch rank_launch : launch.ranks) {
    const std::string board = BoardPath(rank_launch.rank);
    if (!board.empty()) rank_launch.env.push_back(std::string(env::kProgressFile) + "=" + board);
    SpawnedRank spawned = SpawnRank(rank_launch);
    if (spawned.pid < 0) {
      protocol::RankExited exited;
      exited.rank = rank_launch.rank;
      exited.exit_code =
          spawned.spawn_error == protocol::SpawnError::kNotExecutable ? kExitNotExecutable : kExitNotFound;
      exited.spawn_error = spawned.spawn_error;
      exited.error = spawned.error;
      Send(exited);
      continue;
    }
    auto rank = std::make_unique<Rank>(Rank{rank_launch.rank, spawned.pid, true, std::move(spawned.stdout_fd),
                                            std::move(spawned.stderr_fd), LineSplitter(kMaxLinePiece),
                                            LineSplitter(kMaxLinePiece),
                                            RankWatch(rank_launch.rank, spawned.pid, board)});
    Send(protocol::RankStarted{rank->rank, static_cast<int32_t>(rank->pid)});
    ranks_.push_back(std::move(rank));
  }
}

void Agent::ReapChildren() {
  int status = 0;
  pid_t pid;
  while ((pid = ::waitpid(-1, &status, WNOHANG | WUNTRACED | WCONTINUED)) > 0) {
    if (WIFSTOPPED(status) || WIFCONTINUED(status)) {
      NoteStopOrContinue(pid, status);
      continue;
    }
    auto it = std::find_if(ranks_.begin(), ranks_.end(),
                           [&](const auto& r) { return r->running && r->pid == pid; });
    if (it == ranks_.end()) continue;
    Rank& rank = **it;
    rank.running = false;
    // Whatever the rank started dies with it.
    ::killpg(rank.pid, SIGKILL);
    if (rank.out_fd.valid()) DrainOutput(rank, protocol::OutputStream::kStdout);
    if (rank.err_fd.valid()) DrainOutput(rank, protocol::OutputStream::kStderr);
    auto emit_rest = [&](protocol::OutputStream stream, LineSplitter& lines) {
      lines.Finish([&](std::string_view data, bool newline) {
        Send(protocol::RankOutput{rank.rank, stream, newline, std::string(data)});
      });
    };
    emit_rest(protocol::OutputStream::kStdout, rank.out_lines);
    emit_rest(protocol::OutputStream::kStderr, rank.err_lines);
    rank.out_fd.Reset();
    rank.err_fd.Reset();
    protocol::RankExited exited;
    exited.rank = rank.rank;
    ExitStatus end = ExitStatus::FromWaitStatus(status);
    exited.exit_code = end.exit_code;
    exited.signal = end.signal;
    // The board outlives the rank: its last collectives say where it was.
    if (end.exit_code != 0 || end.signal != 0) {
      Send(rank.watch.Progress(/*with_records=*/true, /*exited=*/true));
    }
    Send(exited);
  }
}

void Agent::NoteStopOrContinue(pid_t pid, int status) {
  for (auto& rank : ranks_) {
    if (!rank->running || rank->pid != pid) continue;
    if (WIFSTOPPED(status)) {
      rank->watch.Stopped(WSTOPSIG(status));
    } else {
      rank->watch.Continued();
    }
  }
}

void Agent::SendProgress(bool with_records) {
  for (auto& rank : ranks_) {
    if (rank->running) Send(rank->watch.Progress(with_records, /*exited=*/false));
  }
}

std::string Agent::BoardPath(int32_t rank) const {
  return board_dir_.empty() ? "" : board_dir_ + "/rank-" + std::to_string(rank);
}

void Agent::DrainOutput(Rank& rank, protocol::OutputStream stream) {
  bool is_stdout = stream == protocol::OutputStream::kStdout;
  UniqueFd& fd = is_stdout ? rank.out_fd : rank.err_fd;
  LineSplitter& lines = is_stdout ? rank.out_lines : rank.err_lines;
  auto emit = [&](std::string_view data, bool newline) {
    Send(protocol::RankOutput{rank.rank, stream, newline, std::string(data)});
  };
  char buffer[kReadChunk];
  // After the rank has exited its group is dead, so reading to EAGAIN is bounded.
  for (int reads = 0; fd.valid() && (reads < kReadsPerRound || !rank.running); ++reads) {
    ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n > 0) {
      lines.Feed(std::string_view(buffer, static_cast<size_t>(n)), emit);
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      lines.Finish(emit);
      fd.Reset();
    } else if (errno == EAGAIN) {
      break;
    }
  }
}

void Agent::StartTermination() {
  if (terminating_) return;
  terminating_ = true;
  kill_deadline_ = Clock::now() + kill_grace_;
  for (auto& rank : ranks_) {
    if (rank->running) ::killpg(rank->pid, SIGTERM);
  }
}

void Agent::KillRemaining() {
  killed_ = true;
  for (auto& rank : ranks_) {
    if (rank->running) ::killpg(rank->pid, SIGKILL);
  }
}

void Agent::Send(const protocol::Message& message) {
  if (launcher_gone_ && !std::holds_alternative<protocol::AgentError>(message)) return;
  outgoing_ += protocol::EncodeFrame(message);
}

void Agent::Flush() {
  if (outgoing_.empty()) return;
  if (!WriteAll(control_out_.get(), outgoing_)) {
    // Nobody is listening any more: stop the ranks and leave.
    launcher_gone_ = true;
    StartTermination();
  }
  outgoing_.clear();
  last_sent_ = Clock::now();
}

void Agent::Fail(const std::string& message) {
  std::fprintf(stderr, "hvdrun-agent: %s\n", message.c_str());
  Send(protocol::AgentError{message});
  exit_code_ = kExitLaunchFailure;
  launcher_gone_ = true;
  StartTermination();
}

int Agent::RunningRanks() const {
  return static_cast<int>(
      std::count_if(ranks_.begin(), ranks_.end(), [](const auto& r) { return r->running; }));
}

}  // namespace hvdrun
