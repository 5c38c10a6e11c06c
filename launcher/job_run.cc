#include "launcher/job_run.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "common/env_names.h"
#include "common/error_text.h"
#include "common/exit_codes.h"
#include "common/host/network_interfaces.h"
#include "common/protocol/job_secret.h"
#include "launcher/results/host_facts_file.h"
#include "launcher/results/results_writer.h"

namespace hvdrun {
namespace {

// Where the rendezvous service listens when every host of a job is this machine.
constexpr const char* kLoopbackAddress = "127.0.0.1";

std::string NewJobId() {
  std::random_device random;
  char id[17];
  std::snprintf(id, sizeof(id), "%08x%08x", random(), random());
  return id;
}

std::string WorkingDirectory() {
  std::vector<char> buffer(4096);
  while (::getcwd(buffer.data(), buffer.size()) == nullptr && errno == ERANGE) {
    buffer.resize(buffer.size() * 2);
  }
  return buffer.data();
}

std::string ThisHostName() {
  char name[256] = {};
  return ::gethostname(name, sizeof(name) - 1) == 0 ? name : "localhost";
}

bool IsStopSignal(int signal) {
  return signal == SIGTERM || signal == SIGKILL || signal == SIGINT || signal == SIGHUP;
}

// The variables hvdrun would set by default that the user set in hvdrun's own environment.
std::vector<std::string> UserSetVariables() {
  std::vector<std::string> set;
  for (const char* name : {env::kGlooSocketIfname, env::kNcclSocketIfname}) {
    if (std::getenv(name) != nullptr) set.emplace_back(name);
  }
  return set;
}

}  // namespace

JobRun::JobRun(LaunchOptions options, std::unique_ptr<RankLauncher> launcher,
               std::unique_ptr<SignalWatch> signals)
    : options_(std::move(options)),
      launcher_(std::move(launcher)),
      signals_(std::move(signals)),
      output_(stdout, stderr) {
  output_.StampLines(options_.prefix_timestamp);
}

JobRun::~JobRun() = default;

int JobRun::Run() {
  if (!Prepare()) return start_failure_code_;
  launcher_->Reach(assignment_, this);
  while (!launcher_->Reached() && !stopping_) PollOnce();
  if (launcher_->Reached() && !start_failed_ && !stopping_) {
    launched_ = DecideNetwork() && StartRendezvous() && Launch();
  }
  while (launched_ && !launcher_->Done()) PollOnce();
  launcher_->ShutDown();
  if (gathering_) FinishRecorders();  // the recorders that came before the end
  output_.Flush();
  return Conclude();
}

bool JobRun::Prepare() {
  if (!PrepareElastic()) return false;
  start_failure_code_ = kExitUsage;
  StatusOr<RankAssignment> assignment = RankAssignment::Assign(options_.hosts, options_.num_proc);
  if (!assignment.ok()) {
    std::fprintf(stderr, "hvdrun: %s\n", assignment.status().message().c_str());
    return false;
  }
  assignment_ = std::move(assignment).value();
  if (options_.elastic) {
    elastic_ = std::make_unique<ElasticDriver>(
        *options_.elastic, assignment_, options_.hosts,
        [](const std::string& line) { std::fprintf(stderr, "hvdrun: %s\n", line.c_str()); },
        options_.verbose);
    if (!options_.elastic->discovery_script.empty() && launcher_->CanGrow()) elastic_->AllowGrowth(this);
  }
  if (!options_.output_dir.empty()) {
    if (Status status = output_.OpenRankFiles(options_.output_dir, assignment_.size()); !status.ok()) {
      std::fprintf(stderr, "hvdrun: %s\n", status.message().c_str());
      return false;
    }
  }
  // The check of this machine's interface comes before anything starts: the rendezvous service
  // will listen there.
  if (options_.backend && !options_.network_interfaces.empty()) {
    StatusOr<HostNetwork> here =
        ChooseHostNetwork(ListInterfaceAddresses(), options_.network_interfaces, "", ThisHostName());
    if (!here.ok()) {
      std::fprintf(stderr, "hvdrun: --network-interface: %s\n", here.status().message().c_str());
      return false;
    }
    job_address_ = here.value().address;
  }
  for (const RankPlacement& place : assignment_.ranks()) {
    RankOutcome outcome;
    outcome.rank = place.rank;
    outcome.host = assignment_.hosts()[place.host_index].host;
    outcomes_.push_back(outcome);
  }
  job_id_ = NewJobId();
  start_failure_code_ = kExitLaunchFailure;
  // Before the rendezvous service's thread starts, which inherits the blocked signals.
  if (signals_ == nullptr) {
    StatusOr<std::unique_ptr<SignalWatch>> signals = WatchProcessSignals({SIGUSR1});
    if (!signals.ok()) {
      std::fprintf(stderr, "hvdrun: %s\n", signals.status().message().c_str());
      return false;
    }
    signals_ = std::move(signals).value();
  }
  if (options_.backend) secret_ = NewJobSecret();
  if (!options_.timeline_file.empty()) {
    StatusOr<std::unique_ptr<TimelineCollector>> timeline =
        TimelineCollector::Create(options_.timeline_file, options_.results_dir, job_id_);
    if (!timeline.ok()) {
      std::fprintf(stderr, "hvdrun: %s\n", timeline.status().message().c_str());
      start_failure_code_ = kExitResults;
      return false;
    }
    timeline_ = std::move(timeline).value();
  }
  start_failure_code_ = 0;
  return true;
}

bool JobRun::DecideNetwork() {
  const int hosts = static_cast<int>(assignment_.hosts().size());
  bool any_remote = false;
  for (int i = 0; i < hosts; ++i) any_remote = any_remote || !launcher_->host(i).this_machine;
  // Where the hosts reach this machine: on --network-interface's interface (Prepare chose it), on
  // loopback when every host is this machine, else where the launcher found the route to them.
  if (!job_address_.empty()) {
    Verbose("job network: the rendezvous service listens on " + job_address_ + " (--network-interface)");
  } else if (!any_remote) {
    job_address_ = kLoopbackAddress;
  } else {
    RankLauncher::LocalAddress local = launcher_->LocalAddressTowardHosts();
    job_address_ = local.address;
    Verbose("job network: the hosts reach this machine at " + job_address_ + " (" + local.how + ")");
  }
  any_remote_ = any_remote;
  bool placed = true;
  host_networks_.assign(hosts, HostNetwork{});
  for (int i = 0; i < hosts; ++i) {
    const std::string& name = assignment_.hosts()[i].host;
    StatusOr<HostNetwork> network = NetworkOf(i, name);
    if (!network.ok()) {
      StartFailed(-1, "--network-interface: " + network.status().message(), kExitUsage);
      placed = false;
      continue;
    }
    host_networks_[i] = std::move(network).value();
    if (!options_.network_interfaces.empty()) {
      Verbose("host " + name + ": job traffic on " + host_networks_[i].address + " (--network-interface)");
    }
  }
  return placed;
}

StatusOr<HostNetwork> JobRun::NetworkOf(int host_index, const std::string& name) const {
  const ReachedHost& reached = launcher_->host(host_index);
  // A job all on this machine keeps each host's own name (an address, "localhost" as loopback).
  std::string seen = !reached.this_machine ? reached.address : any_remote_ ? job_address_ : HostAddress(name);
  if (!options_.network_interfaces.empty() && !reached.interfaces_known) {
    // The host's own agent applies the rule (under mpirun); until then, it is where it was reached.
    return HostNetwork{seen, ""};
  }
  return ChooseHostNetwork(reached.interfaces, options_.network_interfaces, seen, name);
}

bool JobRun::StartRendezvous() {
  if (!options_.backend) return true;
  StatusOr<std::unique_ptr<RendezvousServer>> server = RendezvousServer::Start(
      job_address_, secret_, [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
  if (!server.ok()) {
    // Its errors already say "rendezvous: ", its log lines "hvdrun: rendezvous: ".
    StartFailed(-1, server.status().message(), kExitLaunchFailure);
    return false;
  }
  rendezvous_ = std::move(server).value();
  if (timeline_ != nullptr) rendezvous_->KeepTimelines(timeline_->copies_dir());
  Verbose("rendezvous service on " + job_address_ + ":" + std::to_string(rendezvous_->port()));
  return true;
}

bool JobRun::Launch() {
  const int rank0_host = assignment_.placement(0).host_index;
  JobLaunch launch;
  JobEnvironment& job = launch.environment;
  job.job_id = job_id_;
  job.master_addr = host_networks_[rank0_host].address;
  job.master_port = launcher_->host(rank0_host).free_port;
  job.exports = options_.exports;
  if (options_.backend != BackendKind::kMpi) {  // agents report progress: hvdrun ends stalls itself
    std::string shutdown = RankStallShutdownExport(ReadStallSettings(options_.exports, std::getenv));
    if (!shutdown.empty()) job.exports.push_back(std::move(shutdown));
  }
  job.network_interfaces = options_.network_interfaces;
  job.host_networks = host_networks_;
  job.user_variables = UserSetVariables();
  const char* slurm_job = std::getenv(env::kSlurmJobId);
  job.slurm = slurm_job != nullptr && *slurm_job != '\0';
  if (const char* name = std::getenv(env::kSlurmJobName); job.slurm && name != nullptr) {
    job.slurm_job_name = name;
  }
  if (rendezvous_) {
    job.backend = std::string(BackendName(*options_.backend));
    job.rendezvous_addr = job_address_;
    job.rendezvous_port = rendezvous_->port();
    job.secret = secret_;
  }
  if (timeline_ != nullptr) {
    job.timeline_dir = timeline_->rank_dir();
    job.timeline_mark_cycles = options_.timeline_mark_cycles;
  }
  launch.command = options_.command;
  launch.working_dir = options_.working_dir.empty() ? WorkingDirectory() : options_.working_dir;
  launch.rendezvous = rendezvous_.get();
  for (int rank = 0; elastic_ != nullptr && rank < assignment_.size(); ++rank) {
    launch.rank_variables.push_back(elastic_->RankVariables(rank));
  }
  for (int i = 0; i < static_cast<int>(assignment_.hosts().size()); ++i) {
    launcher_hosts_[assignment_.hosts()[i].host] = i;
    networks_[assignment_.hosts()[i].host] = host_networks_[i];
  }
  Verbose("job " + job_id_ + ": " + std::to_string(assignment_.size()) + " ranks on " +
          std::to_string(assignment_.hosts().size()) + " hosts; MASTER_ADDR=" + job.master_addr +
          " MASTER_PORT=" + std::to_string(job.master_port));
  if (elastic_ != nullptr) {
    // Round 0's keys are in the store before any rank can look for them.
    elastic_->Begin(
        [this](const std::string& key, const std::string& value) { rendezvous_->Set(key, value); });
  }
  if (Status status = launcher_->Launch(launch); !status.ok()) {
    StartFailed(-1, status.message(), kExitLaunchFailure);
    return false;
  }
  job_launch_ = std::move(launch);
  WatchRound();
  if (std::string note = stall_->ShutdownIgnoredNote(); !note.empty()) {
    std::fprintf(stderr, "hvdrun: %s\n", note.c_str());
  }
  return true;
}

void JobRun::PollOnce() {
  std::vector<pollfd> fds = {{signals_->fd(), POLLIN, 0}};
  PollRankLauncher(
      *launcher_, fds,
      [&] {
        if (fds[0].revents != 0) HandleSignals();
      },
      elastic_ != nullptr && launched_ ? elastic_->WakeInMs() : -1);
  if (stall_ != nullptr && !stopping_) CheckStall();
  if (elastic_ != nullptr && launched_ && !stopping_ && elastic_->Tick()) BeginStop();
  if (elastic_ != nullptr && launched_ && elastic_->round() != watched_round_) WatchRound();
  CheckRecorders();
  output_.Flush();
}

void JobRun::HandleSignals() {
  for (const ReceivedSignal& received : signals_->Take()) {
    const int sig = received.number;
    if (sig == SIGCHLD) {
      launcher_->ChildExited();
      continue;
    }
    if (sig == SIGUSR1) {
      PrintRankStates();
      continue;
    }
    if (interrupt_signal_ != 0 && sig == SIGINT) {
      std::fprintf(stderr, "hvdrun: second interrupt: killing every rank now\n");
      launcher_->Stop(RankLauncher::StopMode::kNow);
      continue;
    }
    if (interrupt_signal_ == 0) {
      interrupt_signal_ = sig;
      std::fprintf(stderr, "hvdrun: %s received: stopping every rank\n", SignalName(sig).c_str());
    }
    BeginStop();
  }
}

void JobRun::BeginStop() {
  if (stopping_) return;
  stopping_ = true;
  launcher_->Stop(RankLauncher::StopMode::kGraceful);
}

std::optional<JobProblem> JobRun::FindProblem(const std::vector<RankOutcome>& outcomes,
                                              int& first_failure) const {
  if (stall_shutdown_) {
    // The ranks' ends after hvdrun's stop are its doing; only a failure before it counts.
    first_failure = ChooseFirstFailure(outcomes, /*interrupted=*/true);
    return stall_shutdown_;
  }
  const std::chrono::seconds check_time =
      stall_ != nullptr ? stall_->settings().check_time : StallSettings{}.check_time;
  return FailureProblem(outcomes, first_failure, failure_waits_, check_time);
}

int JobRun::Conclude() {
  const bool interrupted = interrupt_signal_ != 0;
  if (elastic_ != nullptr && launched_) elastic_->JobEnded();
  const std::vector<RankOutcome> outcomes = JudgedOutcomes();
  int first_failure = ChooseFirstFailure(outcomes, interrupted);
  const std::optional<JobProblem> problem = FindProblem(outcomes, first_failure);
  const bool every_rank_succeeded =
      launched_ &&
      std::none_of(outcomes.begin(), outcomes.end(), [](const RankOutcome& o) { return o.Failed(); });
  RankLauncher::Ending ending =
      launcher_->Finish({.failure_found = first_failure >= 0 || interrupted || stall_shutdown_,
                         .every_rank_succeeded = every_rank_succeeded});
  int exit_code = 0;
  if (start_failed_) {
    exit_code = start_failure_code_;
  } else if (ending.started_no_rank && !interrupted) {
    std::fprintf(stderr, "hvdrun: %s before starting any rank (its messages are above)\n",
                 ending.description.c_str());
    exit_code = ending.exit_code;
  } else if (ending.failed && every_rank_succeeded && !interrupted) {
    std::fprintf(stderr, "hvdrun: %s, although every rank exited with 0 (its messages are above)\n",
                 ending.description.c_str());
    exit_code = ending.exit_code;
  } else if (elastic_ != nullptr && elastic_->failed() && !interrupted) {
    for (const std::string& line : elastic_->FailureReport()) {
      std::fprintf(stderr, "hvdrun: %s\n", line.c_str());
    }
    exit_code = kExitElasticFailed;
  } else {
    exit_code =
        ReportJobEnd(outcomes, first_failure, interrupt_signal_, output_, problem ? &*problem : nullptr);
  }

  Status status = PublishResults(
      rendezvous_ ? rendezvous_->Reports() : std::map<int, std::string>{}, assignment_, options_, job_id_,
      exit_code, Rounds(), problem ? &*problem : nullptr, elastic_ ? elastic_->PlanJson() : nlohmann::json(),
      elastic_ ? elastic_->SummaryJson() : nlohmann::json());
  // Each host's facts, as its agent gathered them (DIR/hosts/<host>.json).
  const int hosts = launcher_->Reached() && !options_.results_dir.empty()
                        ? static_cast<int>(assignment_.hosts().size())
                        : 0;
  for (int i = 0; status.ok() && i < hosts; ++i) {
    const ReachedHost& host = launcher_->host(i);
    if (host.facts.empty()) continue;
    status = WriteHostFactsFile(options_.results_dir, assignment_.hosts()[i].host, host.facts);
  }
  if (!status.ok()) {
    std::fprintf(stderr, "hvdrun: %s\n", status.message().c_str());
    if (exit_code == 0) exit_code = kExitResults;
  }
  if (timeline_ != nullptr && launched_) {
    std::vector<bool> on_this_machine;
    for (const RankPlacement& place : assignment_.ranks()) {
      on_this_machine.push_back(launcher_->host(place.host_index).this_machine);
    }
    if (Status merged = timeline_->Merge(on_this_machine); !merged.ok()) {
      std::fprintf(stderr, "hvdrun: %s\n", merged.message().c_str());
      if (exit_code == 0) exit_code = kExitResults;
    }
  }
  return exit_code;
}

void JobRun::StartFailed(int host_index, const std::string& reason, int exit_code) {
  if (host_index >= 0) {
    std::fprintf(stderr, "hvdrun: host %s: %s\n", assignment_.hosts()[host_index].host.c_str(),
                 reason.c_str());
  } else {
    std::fprintf(stderr, "hvdrun: %s\n", reason.c_str());
  }
  if (!start_failed_) start_failure_code_ = exit_code;
  start_failed_ = true;
}

void JobRun::RankStarted(int rank, int pid) {
  outcomes_[rank].pid = pid;
  if (stall_ != nullptr) RankProgressed(RankState{.rank = rank, .host = outcomes_[rank].host, .pid = pid});
  Verbose(ProcessName(rank) + " started on " + outcomes_[rank].host + ", pid " + std::to_string(pid));
}

void JobRun::RankOutput(const protocol::RankOutput& output) { output_.Write(output); }

void JobRun::RankEnded(const RankEnd& end) {
  RankOutcome& outcome = outcomes_[end.exit.rank];
  if (outcome.exited || !outcome.lost_reason.empty()) return;
  outcome.exited = true;
  outcome.exit = end.exit;
  if (end.pid > 0) outcome.pid = end.pid;
  outcome.stop_requested = end.stop_requested;
  outcome.end_unix_ns = end.end_unix_ns;
  outcome.heard = ends_heard_++;
  // Ended by the stop's own signals: stopped. Failing on its own while stopping: failed.
  outcome.stopped_by_hvdrun = end.stop_requested && IsStopSignal(end.exit.signal);
  const std::string how =
      end.exit.signal != 0 ? SignalName(end.exit.signal) : "exit " + std::to_string(end.exit.exit_code);
  Verbose(ProcessName(outcome.rank) + " ended: " + how);
  if (end.stop_requested || stopping_) return;
  if (ElasticTakesEnd(outcome.rank,
                      outcome.Failed() ? ElasticEndText(outcome.rank, end.exit, how) : std::string())) {
    return;
  }
  if (outcome.Failed()) {
    NoteFailure();
    BeginStop();
  }
}

std::string JobRun::ElasticEndText(int process, const protocol::RankExited& exit,
                                   const std::string& how) const {
  // What the user's code said last (an exception's line): the re-formation's line and the report of
  // an elastic job that fails as a whole carry it, as a failed job's table does.
  std::string text = (exit.signal != 0 ? "killed by " : "ended with ") + how;
  const std::vector<std::string> tail = output_.StderrTail(process);
  if (!tail.empty()) text += " (last stderr line: " + PrintableText(tail.back()) + ")";
  return text;
}

void JobRun::RankLost(int rank, const std::string& reason, bool stop_requested) {
  RankOutcome& outcome = outcomes_[rank];
  if (outcome.exited || !outcome.lost_reason.empty()) return;
  outcome.lost_reason = reason;
  outcome.stop_requested = stop_requested;
  outcome.stopped_by_hvdrun = stop_requested;
  outcome.heard = ends_heard_++;
  if (!stop_requested && !stopping_ && !ElasticTakesEnd(rank, "lost: " + reason)) {
    NoteFailure();
    BeginStop();
  }
}

void JobRun::Verbose(const std::string& line) const {
  if (options_.verbose) std::fprintf(stderr, "hvdrun: %s\n", line.c_str());
}

}  // namespace hvdrun
