// FakeRankLauncher: a RankLauncher for unit tests of the job lifecycle (launcher/job_run.h). It
// starts nothing: a test says what each host answers and what happens to the ranks, step by step,
// and the fake reports it through RankEvents as a real launcher would, then records what JobRun
// asked of it (the launch, the stops, the shutdown).
//
// Each call of Service() runs the next step of the script. Once the script is done, ranks that
// still run end as a real stop would end them: after Stop(kGraceful), by SIGTERM unless the test
// made them ignore it; after Stop(kNow), by SIGKILL. A job that would wait forever fails the test.
#ifndef HVDRUN_LAUNCHER_FAKE_RANK_LAUNCHER_H_
#define HVDRUN_LAUNCHER_FAKE_RANK_LAUNCHER_H_

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/process/file_descriptor.h"
#include "common/process/signal_watch.h"
#include "launcher/rank_launcher.h"

namespace hvdrun {

class FakeRankLauncher : public RankLauncher {
 public:
  using Step = std::function<void(FakeRankLauncher&, RankEvents&)>;

  // Every host answers at once, as `hosts` (by host index; missing ones: this machine).
  explicit FakeRankLauncher(std::vector<ReachedHost> hosts = {}) : hosts_(std::move(hosts)) {}

  // The script, run one step per Service() call from the launch on.
  FakeRankLauncher& Then(Step step);
  // Steps run before the launch instead (while hosts are being reached); Reached() turns true
  // when they are done.
  FakeRankLauncher& WhileReaching(Step step);
  // Shorthands for steps.
  static Step Exit(int rank, int exit_code, uint64_t end_unix_ns = 0);
  static Step Killed(int rank, int signal);
  static Step Lost(int rank, const std::string& reason);
  static Step Print(int rank, const std::string& line, bool to_stderr = true);
  // A rank's progress report, as its agent would send it.
  static Step Progress(RankState state);
  // Ranks that ignore a graceful stop (they end only on Stop(kNow)).
  FakeRankLauncher& IgnoreGracefulStop() {
    ignore_graceful_stop_ = true;
    return *this;
  }
  FakeRankLauncher& SetLocalAddress(LocalAddress address) {
    local_address_ = std::move(address);
    return *this;
  }
  FakeRankLauncher& SetEnding(Ending ending) {
    ending_ = std::move(ending);
    return *this;
  }

  // What JobRun did.
  const std::optional<JobLaunch>& launched() const { return launched_; }
  const std::vector<StopMode>& stops() const { return stops_; }
  bool shut_down() const { return shut_down_; }
  const std::optional<Verdict>& verdict() const { return verdict_; }
  bool Running(int rank) const { return running_.at(rank); }
  // How many times JobRun asked for the ranks' progress, and with their recorders.
  int progress_requests() const { return progress_requests_; }
  int recorder_requests() const { return recorder_requests_; }

  // RankLauncher.
  void Reach(const RankAssignment& assignment, RankEvents* events) override;
  bool Reached() const override { return reaching_.empty(); }
  const ReachedHost& host(int host_index) const override { return hosts_.at(host_index); }
  LocalAddress LocalAddressTowardHosts() const override { return local_address_; }
  Status Launch(const JobLaunch& launch) override;
  void AddPollFds(std::vector<pollfd>& /*fds*/) override {}
  int PollTimeoutMs() const override { return 0; }
  void Service(const pollfd* fds, size_t count) override;
  void ChildExited() override {}
  bool RequestProgress(bool with_recorder) override {
    ++progress_requests_;
    recorder_requests_ += with_recorder ? 1 : 0;
    return true;
  }
  void Stop(StopMode mode) override;
  bool Done() const override;
  void ShutDown() override { shut_down_ = true; }
  Ending Finish(const Verdict& verdict) override {
    verdict_ = verdict;
    return ending_;
  }

 private:
  // Rank `rank` ends (if it still runs) with `exit_code`, or by `signal` when not 0.
  void End(RankEvents& events, int rank, int exit_code, int signal, uint64_t end_unix_ns = 0);

  std::vector<ReachedHost> hosts_;
  std::deque<Step> reaching_;
  std::deque<Step> script_;
  RankEvents* events_ = nullptr;
  std::vector<bool> running_;
  bool ignore_graceful_stop_ = false;
  int progress_requests_ = 0;
  int recorder_requests_ = 0;
  LocalAddress local_address_;
  Ending ending_;
  std::optional<JobLaunch> launched_;
  std::vector<StopMode> stops_;
  bool shut_down_ = false;
  std::optional<Verdict> verdict_;
  int idle_rounds_ = 0;
};

// SignalWatch that a test raises by hand.
class FakeSignalWatch : public SignalWatch {
 public:
  FakeSignalWatch();
  int fd() const override { return read_.get(); }
  std::vector<ReceivedSignal> Take() override;
  void Raise(int signal);

 private:
  UniqueFd read_;
  UniqueFd write_;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_FAKE_RANK_LAUNCHER_H_
