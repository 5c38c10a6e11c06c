#include "launcher/mpirun/mpirun_launcher.h"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <thread>

#include "common/exit_codes.h"
#include "common/host/free_port.h"
#include "common/host/network_interfaces.h"
#include "common/process/process_spawner.h"
#include "common/process/rank_exit_record.h"
#include "common/process/wait_status.h"
#include "common/shell_words.h"
#include "launcher/local_host.h"
#include "launcher/rendezvous/rendezvous_server.h"
#include "launcher/results/failure_report.h"

namespace hvdrun {
namespace {

// Longest piece of a rank's line passed on as one output line, as in agent mode (agent/agent.cc).
constexpr size_t kMaxLinePiece = size_t{64} * 1024;
constexpr size_t kReadChunk = size_t{64} * 1024;
// Reads per stream per poll round, so that one busy stream cannot starve the other and signals.
constexpr int kReadsPerRound = 16;
// After mpirun has exited, how long its output may still arrive from processes that hold it.
constexpr std::chrono::milliseconds kDrainWait{2000};
// After hvdrun has killed mpirun, how long the agent of a started rank without an exit record
// still has to leave one: such an agent kills its rank at once (agent/mpi_rank.h).
constexpr std::chrono::milliseconds kRecordWait{2000};

// The CPUs this process may run on (its affinity mask, which a container's limit narrows); 0
// when unknown.
int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  return CPU_COUNT(&set);
}

// The first host that is not this machine, or nullptr.
const HostRanks* FirstRemoteHost(const RankAssignment& assignment) {
  for (const HostRanks& ranks : assignment.hosts()) {
    if (!IsLocalHost(ranks.host)) return &ranks;
  }
  return nullptr;
}

// Why mpirun cannot run `assignment` with `ssh`'s settings (the usage line), or Ok.
Status CheckMpiJob(const RankAssignment& assignment, const SshOptions& ssh) {
  if (Status hosts = CheckMpiHosts(assignment, IsLocalHost); !hosts.ok()) return hosts;
  return FirstRemoteHost(assignment) != nullptr ? CheckMpiSshOptions(ssh) : Status::Ok();
}

MpiLaunchHost ThisLaunchHost(const RankAssignment& assignment) {
  return {.as_root = ::geteuid() == 0,
          .cpus = UsableCpus(),
          .remote_hosts = FirstRemoteHost(assignment) != nullptr};
}

}  // namespace

int PrintMpirunCommand(const LaunchOptions& options, const std::string& local_agent_path) {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign(options.hosts, options.num_proc);
  Status usable = assignment.ok() ? CheckMpiJob(assignment.value(), options.ssh) : assignment.status();
  if (!usable.ok()) {
    std::fprintf(stderr, "hvdrun: %s\n", usable.message().c_str());
    return kExitUsage;
  }
  const bool remote_hosts = FirstRemoteHost(assignment.value()) != nullptr;
  // Only the names of the variables are printed, so the job's values are left empty.
  JobLaunch launch;
  launch.environment.exports = options.exports;
  launch.environment.network_interfaces = options.network_interfaces;
  launch.command = options.command;
  MpiCommand command = BuildMpiCommand(assignment.value(), launch, MpirunSettingsOf(options),
                                       remote_hosts ? options.remote_agent_path : local_agent_path,
                                       ThisLaunchHost(assignment.value()));
  std::printf("%s\n", ShellJoin(command.argv).c_str());
  return 0;
}

MpirunLauncher::MpirunLauncher(const LaunchOptions& options, std::string local_agent_path)
    : settings_(MpirunSettingsOf(options)),
      remote_agent_path_(options.remote_agent_path),
      verbose_(options.verbose),
      agent_path_(std::move(local_agent_path)) {}

// A started mpirun that was not reaped is SIGKILLed with its group and reaped by ChildProcess.
MpirunLauncher::~MpirunLauncher() = default;

void MpirunLauncher::Reach(const RankAssignment& assignment, RankEvents* events) {
  events_ = events;
  assignment_ = assignment;
  if (Status usable = CheckMpiJob(assignment_, settings_.ssh); !usable.ok()) {
    events_->StartFailed(-1, usable.message(), kExitUsage);
    return;
  }
  const HostRanks* first_remote = FirstRemoteHost(assignment_);
  // mpirun runs one program path on every host: with hosts that are not this machine, the one
  // they have (--agent-path, else hvdrun-agent in their PATH).
  if (first_remote != nullptr) agent_path_ = remote_agent_path_;
  hosts_.resize(assignment_.hosts().size());
  bool resolved = true;
  for (size_t i = 0; i < hosts_.size(); ++i) {
    const std::string& name = assignment_.hosts()[i].host;
    hosts_[i].this_machine = IsLocalHost(name);
    if (hosts_[i].this_machine) continue;
    StatusOr<std::string> address = ResolveIpv4(name);
    if (!address.ok()) {
      events_->StartFailed(static_cast<int>(i), address.status().message(), kExitLaunchFailure);
      resolved = false;
      continue;
    }
    hosts_[i].address = std::move(address).value();
  }
  if (!resolved) return;
  if (first_remote != nullptr) {
    const int index = static_cast<int>(first_remote - assignment_.hosts().data());
    StatusOr<std::string> local = LocalAddressToward(hosts_[index].address);
    if (!local.ok()) {
      events_->StartFailed(index, local.status().message(), kExitLaunchFailure);
      return;
    }
    local_address_ = {std::move(local).value(), "the local address of the route to " + first_remote->host};
  }
  // A port free on this machine: a guess for a remote rank 0, as horovodrun's.
  hosts_[assignment_.placement(0).host_index].free_port = FindFreePort();
}

Status MpirunLauncher::Launch(const JobLaunch& launch) {
  rendezvous_ = launch.rendezvous;
  // Each rank's agent decides its own host's place on the network (agent/mpi_rank.h).
  MpiCommand command =
      BuildMpiCommand(assignment_, launch, settings_, agent_path_, ThisLaunchHost(assignment_));
  Verbose("running: " + ShellJoin(command.argv));
  if (Status status = StartMpirun(command); !status.ok()) return status;
  Verbose("mpirun started (pid " + std::to_string(mpirun_.pid()) + ")");
  return Status::Ok();
}

Status MpirunLauncher::StartMpirun(const MpiCommand& command) {
  SpawnOptions spawn;
  spawn.argv = command.argv;
  spawn.env_mode = EnvironmentMode::kInheritWith;
  spawn.env = command.env;
  spawn.stdout_spec = StdioSpec::Pipe();
  spawn.stderr_spec = StdioSpec::Pipe();
  // Its own group, so that a Ctrl-C reaches hvdrun alone and hvdrun stops mpirun in order; a
  // SIGKILLed hvdrun still stops mpirun, which then stops the ranks.
  spawn.own_process_group = true;
  spawn.parent_death_signal = SIGTERM;
  StatusOr<ChildProcess> started =
      SpawnInstalledProgram(spawn, "install Open MPI's mpirun: apt-get install openmpi-bin");
  if (!started.ok()) return Status::Error("--mpi: " + started.status().message());
  mpirun_ = std::move(started).value();
  out_.fd = std::move(mpirun_.stdout_pipe());
  err_.fd = std::move(mpirun_.stderr_pipe());
  return Status::Ok();
}

void MpirunLauncher::AddPollFds(std::vector<pollfd>& fds) {
  polled_.clear();
  for (Stream* stream : {&out_, &err_}) {
    if (!stream->fd.valid()) continue;
    fds.push_back({stream->fd.get(), POLLIN, 0});
    polled_.push_back(stream);
  }
}

int MpirunLauncher::PollTimeoutMs() const {
  if (!mpirun_reaped_) return -1;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(drain_deadline_ - Clock::now());
  return static_cast<int>(std::max<int64_t>(left.count(), 0));
}

void MpirunLauncher::Service(const pollfd* fds, size_t count) {
  for (size_t i = 0; i < count && i < polled_.size(); ++i) {
    if (fds[i].revents != 0) ReadStream(*polled_[i]);
  }
}

void MpirunLauncher::ChildExited() {
  if (mpirun_.pid() <= 0 || mpirun_reaped_) return;
  if (std::optional<int> status = mpirun_.Poll()) {
    mpirun_end_ = ExitStatus::FromWaitStatus(*status);
    mpirun_reaped_ = true;
    drain_deadline_ = Clock::now() + kDrainWait;
  }
}

void MpirunLauncher::Stop(StopMode mode) {
  if (mpirun_.pid() <= 0) return;
  stop_sent_ = true;
  if (mode == StopMode::kGraceful) {
    mpirun_.Signal(SIGTERM);
    return;
  }
  // The agents see mpirun die and SIGKILL their ranks; those already known are killed here too.
  if (!mpirun_reaped_) mpirun_.KillGroup();
  KillUnfinishedRanks();
  killed_ranks_ = true;
}

bool MpirunLauncher::Done() const {
  return mpirun_reaped_ && ((!out_.fd.valid() && !err_.fd.valid()) || Clock::now() >= drain_deadline_);
}

void MpirunLauncher::ReadStream(Stream& stream) {
  MpirunOutputParser::Sink sink = OutputSink();
  char buffer[kReadChunk];
  for (int reads = 0; reads < kReadsPerRound && stream.fd.valid(); ++reads) {
    ssize_t n = ::read(stream.fd.get(), buffer, sizeof(buffer));
    if (n > 0) {
      stream.parser.Feed(std::string_view(buffer, static_cast<size_t>(n)), sink);
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      stream.parser.Finish(sink);
      stream.fd.Reset();
    } else if (errno == EAGAIN) {
      break;
    }
  }
}

MpirunOutputParser::Sink MpirunLauncher::OutputSink() {
  return MpirunOutputParser::Sink{
      [this](int rank, protocol::OutputStream tagged, std::string_view bytes) {
        RouteTagged(rank, tagged, bytes);
      },
      [this](std::string_view line) { PrintMpirunLines(banners_.Add(std::string(line))); }};
}

void MpirunLauncher::RouteTagged(int rank, protocol::OutputStream stream, std::string_view bytes) {
  auto [it, added] = lines_.try_emplace({rank, stream}, kMaxLinePiece);
  it->second.Feed(bytes, [&](std::string_view data, bool newline) {
    events_->RankOutput(protocol::RankOutput{rank, stream, newline, std::string(data)});
  });
}

void MpirunLauncher::PrintMpirunLines(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fputc('\n', stderr);
  }
}

void MpirunLauncher::FinishOutput() {
  MpirunOutputParser::Sink sink = OutputSink();
  for (Stream* stream : {&out_, &err_}) {
    if (!stream->fd.valid()) continue;
    stream->parser.Finish(sink);
    stream->fd.Reset();
  }
  for (auto& [key, splitter] : lines_) {
    const int rank = key.first;
    const protocol::OutputStream stream = key.second;
    splitter.Finish([&](std::string_view data, bool newline) {
      events_->RankOutput(protocol::RankOutput{rank, stream, newline, std::string(data)});
    });
  }
}

void MpirunLauncher::KillUnfinishedRanks() {
  if (rendezvous_ == nullptr) return;
  std::map<std::string, std::string> exits = rendezvous_->ValuesWithPrefix(kRankExitKeyPrefix);
  for (const auto& [key, value] : rendezvous_->ValuesWithPrefix(kRankStartedKeyPrefix)) {
    int rank = RankOfRecordKey(key, kRankStartedKeyPrefix);
    StatusOr<RankStartedRecord> started = DecodeRankStartedRecord(value);
    // The group holds the rank, its agent and what the rank started. On another host, the rank's
    // agent sees its daemon die with mpirun and kills it there.
    if (rank < 0 || rank >= assignment_.size() ||
        !hosts_[assignment_.placement(rank).host_index].this_machine) {
      continue;
    }
    if (started.ok() && !exits.contains(RankExitKey(rank))) ::killpg(started.value().process_group, SIGKILL);
  }
}

void MpirunLauncher::ShutDown() {
  if (mpirun_.pid() <= 0) return;  // never started
  if (!mpirun_reaped_) {
    // JobRun's loop ends once mpirun is reaped; this is for a loop that ended otherwise.
    mpirun_end_ = ExitStatus::FromWaitStatus(mpirun_.Wait());
    mpirun_reaped_ = true;
  }
  FinishOutput();
  Verbose(MpirunEnd());
  ReportRecords();
}

void MpirunLauncher::ReportRecords() {
  const int size = assignment_.size();
  std::map<std::string, std::string> started = rendezvous_->ValuesWithPrefix(kRankStartedKeyPrefix);
  std::map<std::string, std::string> exits = rendezvous_->ValuesWithPrefix(kRankExitKeyPrefix);
  auto unfinished = [&] {
    return std::any_of(started.begin(), started.end(), [&](const auto& entry) {
      return !exits.contains(RankExitKey(RankOfRecordKey(entry.first, kRankStartedKeyPrefix)));
    });
  };
  // mpirun that exited has seen every agent end. Agents that outlived a killed mpirun are still
  // stopping their ranks; their records follow, or hvdrun kills what is left of them.
  if (mpirun_end_.signal != 0 && !killed_ranks_) {
    Clock::time_point deadline = Clock::now() + kRecordWait;
    while (unfinished() && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      exits = rendezvous_->ValuesWithPrefix(kRankExitKeyPrefix);
    }
    KillUnfinishedRanks();
  }
  any_record_ = !started.empty() || !exits.empty();

  std::vector<int> start_pid(size, 0);
  for (const auto& [key, value] : started) {
    int rank = RankOfRecordKey(key, kRankStartedKeyPrefix);
    StatusOr<RankStartedRecord> record = DecodeRankStartedRecord(value);
    if (!record.ok() || rank < 0 || rank >= size) {
      std::fprintf(stderr, "hvdrun: rendezvous: ignoring the record '%s': %s\n", key.c_str(),
                   record.ok() ? "it is not about a rank of this job" : record.status().message().c_str());
      continue;
    }
    start_pid[rank] = record.value().pid;
  }
  std::vector<bool> ended(size, false);
  bool stopping = stop_sent_;
  std::vector<RankEnd> ends;
  for (const auto& [key, value] : exits) {
    int rank = RankOfRecordKey(key, kRankExitKeyPrefix);
    StatusOr<RankExitRecord> record = DecodeRankExitRecord(value);
    if (!record.ok() || rank < 0 || rank >= size || record.value().exit.rank != rank) {
      std::fprintf(stderr, "hvdrun: rendezvous: ignoring the record '%s': %s\n", key.c_str(),
                   record.ok() ? "it is not about a rank of this job" : record.status().message().c_str());
      continue;
    }
    ended[rank] = true;
    const RankExitRecord& exit = record.value();
    ends.push_back(RankEnd{.exit = exit.exit,
                           .stop_requested = exit.stop_requested,
                           .end_unix_ns = exit.end_unix_ns,
                           .pid = exit.pid > 0 ? exit.pid : start_pid[rank]});
    stopping = stopping || exit.stop_requested || exit.exit.exit_code != 0 || exit.exit.signal != 0;
  }
  for (const RankEnd& end : ends) events_->RankEnded(end);
  // A rank without an exit record: mpirun stopped it, or never started it, when the job was being
  // stopped; otherwise its agent vanished.
  for (int rank = 0; rank < size; ++rank) {
    if (ended[rank]) continue;
    if (start_pid[rank] > 0) events_->RankStarted(rank, start_pid[rank]);
    std::string reason = start_pid[rank] == 0 ? "its program never started"
                         : killed_ranks_      ? "killed by hvdrun"
                                              : "its hvdrun-agent ended without an exit record";
    events_->RankLost(rank, reason, stopping);
  }
}

RankLauncher::Ending MpirunLauncher::Finish(const Verdict& verdict) {
  Ending ending;
  if (mpirun_.pid() <= 0) return ending;  // never started
  const bool mpirun_failed = !mpirun_end_.succeeded();
  // mpirun's own account is needed where hvdrun has none.
  const bool hvdrun_explains = verdict.failure_found || (verdict.every_rank_succeeded && !mpirun_failed);
  PrintMpirunLines(banners_.Finish(hvdrun_explains));
  ending.description = MpirunEnd();
  if (!any_record_) {
    ending.started_no_rank = true;
    ending.exit_code = kExitLaunchFailure;
  } else if (mpirun_failed) {
    ending.failed = true;
    ending.exit_code = mpirun_end_.exit_code;
  }
  return ending;
}

std::string MpirunLauncher::MpirunEnd() const {
  if (mpirun_end_.signal != 0) return "mpirun was killed by " + SignalName(mpirun_end_.signal);
  return "mpirun exited with code " + std::to_string(mpirun_end_.exit_code);
}

void MpirunLauncher::Verbose(const std::string& line) const {
  if (verbose_) std::fprintf(stderr, "hvdrun: %s\n", line.c_str());
}

}  // namespace hvdrun
