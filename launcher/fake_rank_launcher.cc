#include "launcher/fake_rank_launcher.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>

namespace hvdrun {
namespace {

// Rounds without anything to do after which a job is taken to wait forever.
constexpr int kMaxIdleRounds = 1000;

}  // namespace

FakeRankLauncher& FakeRankLauncher::Then(Step step) {
  script_.push_back(std::move(step));
  return *this;
}

FakeRankLauncher& FakeRankLauncher::WhileReaching(Step step) {
  reaching_.push_back(std::move(step));
  return *this;
}

FakeRankLauncher::Step FakeRankLauncher::Exit(int rank, int exit_code, uint64_t end_unix_ns) {
  return
      [=](FakeRankLauncher& fake, RankEvents& events) { fake.End(events, rank, exit_code, 0, end_unix_ns); };
}

FakeRankLauncher::Step FakeRankLauncher::Killed(int rank, int signal) {
  return [=](FakeRankLauncher& fake, RankEvents& events) { fake.End(events, rank, 0, signal); };
}

FakeRankLauncher::Step FakeRankLauncher::Lost(int rank, const std::string& reason) {
  return [=](FakeRankLauncher& fake, RankEvents& events) {
    if (!fake.running_.at(rank)) return;
    fake.running_[rank] = false;
    events.RankLost(rank, reason, !fake.stops_.empty());
  };
}

FakeRankLauncher::Step FakeRankLauncher::Print(int rank, const std::string& line, bool to_stderr) {
  return [=](FakeRankLauncher& /*fake*/, RankEvents& events) {
    events.RankOutput(protocol::RankOutput{
        rank, to_stderr ? protocol::OutputStream::kStderr : protocol::OutputStream::kStdout, true, line});
  };
}

FakeRankLauncher::Step FakeRankLauncher::Progress(RankState state) {
  return [state = std::move(state)](FakeRankLauncher& /*fake*/, RankEvents& events) {
    events.RankProgressed(state);
  };
}

void FakeRankLauncher::Reach(const RankAssignment& assignment, RankEvents* events) {
  events_ = events;
  running_.assign(assignment.size(), false);
  if (hosts_.size() < assignment.hosts().size()) {
    ReachedHost here;
    here.this_machine = true;
    hosts_.resize(assignment.hosts().size(), here);
  }
}

Status FakeRankLauncher::Launch(const JobLaunch& launch) {
  launched_ = launch;
  std::fill(running_.begin(), running_.end(), true);
  for (size_t rank = 0; rank < running_.size(); ++rank) {
    events_->RankStarted(static_cast<int>(rank), 1000 + static_cast<int>(rank));
  }
  return Status::Ok();
}

void FakeRankLauncher::Service(const pollfd* /*fds*/, size_t /*count*/) {
  std::deque<Step>& steps = !Reached() ? reaching_ : script_;
  if (!Reached() || (launched_ && !script_.empty())) {
    Step step = std::move(steps.front());
    steps.pop_front();
    step(*this, *events_);
    return;
  }
  if (!launched_) return;
  // The script is done: a stop ends the ranks that still run, as a real one would.
  bool killed = std::find(stops_.begin(), stops_.end(), StopMode::kNow) != stops_.end();
  if (killed || (!stops_.empty() && !ignore_graceful_stop_)) {
    for (size_t rank = 0; rank < running_.size(); ++rank) {
      End(*events_, static_cast<int>(rank), 0, killed ? SIGKILL : SIGTERM);
    }
    return;
  }
  if (++idle_rounds_ >= kMaxIdleRounds) {
    ADD_FAILURE() << "the job waits for ranks that the script never ends";
    for (size_t rank = 0; rank < running_.size(); ++rank) {
      End(*events_, static_cast<int>(rank), 0, 0);
    }
  }
}

void FakeRankLauncher::Stop(StopMode mode) { stops_.push_back(mode); }

bool FakeRankLauncher::Done() const {
  return launched_ && std::none_of(running_.begin(), running_.end(), [](bool running) { return running; });
}

void FakeRankLauncher::End(RankEvents& events, int rank, int exit_code, int signal, uint64_t end_unix_ns) {
  if (!running_.at(rank)) return;
  running_[rank] = false;
  RankEnd end;
  end.exit.rank = rank;
  end.exit.exit_code = exit_code;
  end.exit.signal = signal;
  end.stop_requested = !stops_.empty();
  end.end_unix_ns = end_unix_ns;
  events.RankEnded(end);
}

FakeSignalWatch::FakeSignalWatch() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
    read_ = UniqueFd(fds[0]);
    write_ = UniqueFd(fds[1]);
  }
}

std::vector<ReceivedSignal> FakeSignalWatch::Take() {
  std::vector<ReceivedSignal> taken;
  int signal = 0;
  while (::read(read_.get(), &signal, sizeof(signal)) == sizeof(signal)) taken.push_back({signal, 0});
  return taken;
}

void FakeSignalWatch::Raise(int signal) {
  ASSERT_EQ(::write(write_.get(), &signal, sizeof(signal)), static_cast<ssize_t>(sizeof(signal)));
}

}  // namespace hvdrun
