#include "launcher/mpi_job.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <thread>

#include "common/exit_codes.h"
#include "common/free_port.h"
#include "common/job_secret.h"
#include "common/rank_environment.h"
#include "common/rank_exit_record.h"
#include "launcher/job_start.h"
#include "launcher/local_host.h"
#include "launcher/results_writer.h"
#include "launcher/shell_words.h"

extern char** environ;  // NOLINT(readability-identifier-naming): POSIX's name

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

// The environment mpirun runs with: hvdrun's own, with `entries` (NAME=VALUE) set on top.
std::vector<std::string> MpirunEnvironment(const std::vector<std::string>& entries) {
  std::vector<std::string> env;
  auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string text(*entry);
    bool replaced = std::any_of(entries.begin(), entries.end(),
                                [&](const std::string& e) { return name_of(e) == name_of(text); });
    if (!replaced) env.push_back(std::move(text));
  }
  env.insert(env.end(), entries.begin(), entries.end());
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

// The rank a record's key names ("hvdrun/exit/3" -> 3), or -1.
int RankOfKey(const std::string& key, std::string_view prefix) {
  int rank = -1;
  const char* begin = key.data() + prefix.size();
  const char* end = key.data() + key.size();
  auto [ptr, error] = std::from_chars(begin, end, rank);
  return error == std::errc() && ptr == end && begin != end ? rank : -1;
}

// The CPUs this process may run on (its affinity mask, which a container's limit narrows); 0
// when unknown.
int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  return CPU_COUNT(&set);
}

// The IPv4 address `host` resolves to, as mpirun's ssh will resolve it.
StatusOr<in_addr> ResolveIpv4(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (int error = ::getaddrinfo(host.c_str(), nullptr, &hints, &found); error != 0) {
    return Status::Error("host " + host + ": resolve: cannot resolve '" + host +
                         "': " + ::gai_strerror(error));
  }
  in_addr address = reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr;
  ::freeaddrinfo(found);
  return address;
}

std::string FormatIpv4(const in_addr& address) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &address, text, sizeof(text));
  return text;
}

// The address of this machine that `host` reaches it by: the local end of the route to the host,
// which connecting a UDP socket chooses without sending anything.
StatusOr<std::string> LocalAddressToward(const std::string& host) {
  StatusOr<in_addr> remote = ResolveIpv4(host);
  if (!remote.ok()) return remote.status();
  UniqueFd socket(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);  // any port: nothing is sent
  to.sin_addr = remote.value();
  sockaddr_in local{};
  socklen_t length = sizeof(local);
  if (!socket.valid() || ::connect(socket.get(), reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0 ||
      ::getsockname(socket.get(), reinterpret_cast<sockaddr*>(&local), &length) != 0) {
    return Status::Error("host " + host + ": connect: no route from this machine to " +
                         FormatIpv4(remote.value()) + ": " + std::strerror(errno));
  }
  return FormatIpv4(local.sin_addr);
}

// For a job with hosts that are not this machine (the first is `first_remote`): resolves each of
// them, so that a wrong name fails with hvdrun's one line rather than with ssh's among mpirun's
// banners, and returns the address of this machine that `first_remote` reaches it by.
StatusOr<std::string> RemoteJobAddress(const RankAssignment& assignment, const std::string& first_remote) {
  for (const HostRanks& ranks : assignment.hosts()) {
    if (IsLocalHost(ranks.host)) continue;
    if (StatusOr<in_addr> address = ResolveIpv4(ranks.host); !address.ok()) return address.status();
  }
  return LocalAddressToward(first_remote);
}

bool IsStopSignal(int signal) {
  return signal == SIGTERM || signal == SIGKILL || signal == SIGINT || signal == SIGHUP;
}

}  // namespace

MpiJob::MpiJob(LaunchOptions options, std::string agent_path)
    : options_(std::move(options)), agent_path_(std::move(agent_path)), output_(stdout, stderr) {}

int MpiJob::Run() {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign(options_.hosts, options_.num_proc);
  Status hosts = assignment.ok() ? CheckMpiHosts(assignment.value(), IsLocalHost) : assignment.status();
  const HostRanks* first_remote = nullptr;
  if (hosts.ok()) {
    for (const HostRanks& ranks : assignment.value().hosts()) {
      if (!IsLocalHost(ranks.host)) {
        first_remote = &ranks;
        break;
      }
    }
  }
  if (hosts.ok() && first_remote != nullptr) hosts = CheckMpiSshOptions(options_.ssh);
  if (!hosts.ok()) {
    std::fprintf(stderr, "hvdrun: %s\n", hosts.message().c_str());
    return kExitUsage;
  }
  assignment_ = std::move(assignment).value();
  const bool remote_hosts = first_remote != nullptr;
  const std::string remote_host = remote_hosts ? first_remote->host : "";
  // mpirun runs one program path on every host: with hosts that are not this machine, the one
  // they have (--agent-path, else hvdrun-agent in their PATH).
  if (remote_hosts) agent_path_ = options_.remote_agent_path;
  const MpiLaunchHost host{.as_root = ::geteuid() == 0, .cpus = UsableCpus(), .remote_hosts = remote_hosts};
  if (options_.dry_run) {
    // Only the names of the variables are printed, so no value is needed.
    MpiCommand command = BuildMpiCommand(assignment_, options_, JobEnvironment{}, agent_path_, host);
    std::printf("%s\n", ShellJoin(command.argv).c_str());
    return 0;
  }
  if (!options_.output_dir.empty()) {
    if (Status status = output_.OpenRankFiles(options_.output_dir, assignment_.size()); !status.ok()) {
      std::fprintf(stderr, "hvdrun: %s\n", status.message().c_str());
      return kExitUsage;
    }
  }
  outcomes_ = InitialOutcomes(assignment_);
  end_unix_ns_.assign(outcomes_.size(), 0);
  stop_requested_.assign(outcomes_.size(), false);
  job_id_ = NewJobId();
  // Blocked before the service's thread starts, which inherits the mask: a signal that thread
  // could take would bypass the signalfd (and SIGINT would end hvdrun on the spot).
  StatusOr<UniqueFd> signals = WatchJobSignals();
  if (!signals.ok()) {
    std::fprintf(stderr, "hvdrun: %s\n", signals.status().message().c_str());
    return kExitLaunchFailure;
  }
  signals_ = std::move(signals).value();
  secret_ = NewJobSecret();
  std::string job_address = kRendezvousAddress;
  if (!options_.network_interfaces.empty()) {
    StatusOr<std::string> address = ThisMachineInterfaceAddress(options_.network_interfaces);
    if (!address.ok()) {
      std::fprintf(stderr, "hvdrun: %s\n", address.status().message().c_str());
      return kExitUsage;
    }
    job_address = std::move(address).value();
    Verbose("job network: the rendezvous service listens on " + job_address + " (--network-interface)");
  }
  if (remote_hosts) {
    StatusOr<std::string> address = RemoteJobAddress(assignment_, remote_host);
    if (!address.ok()) {
      std::fprintf(stderr, "hvdrun: %s\n", address.status().message().c_str());
      return kExitLaunchFailure;
    }
    if (options_.network_interfaces.empty()) {
      job_address = std::move(address).value();
      Verbose("job network: the hosts reach this machine at " + job_address +
              " (the local address of the route to " + remote_host + ")");
    }
  }
  StatusOr<std::unique_ptr<RendezvousServer>> server = StartJobRendezvous(secret_, job_address);
  if (!server.ok()) {
    std::fprintf(stderr, "hvdrun: %s\n", server.status().message().c_str());
    return kExitLaunchFailure;
  }
  rendezvous_ = std::move(server).value();

  JobEnvironment job;
  job.job_id = job_id_;
  job.backend = std::string(BackendName(BackendKind::kMpi));
  // Rank 0's host as the other hosts reach it; the port is free on this machine (a guess for a
  // remote rank 0, as horovodrun's).
  const std::string& rank0_host = assignment_.hosts().front().host;
  if (!remote_hosts) {
    job.master_addr = HostAddress(rank0_host);
  } else if (IsLocalHost(rank0_host)) {
    job.master_addr = job_address;
  } else {
    StatusOr<in_addr> address = ResolveIpv4(rank0_host);
    if (!address.ok()) {
      std::fprintf(stderr, "hvdrun: %s\n", address.status().message().c_str());
      return kExitLaunchFailure;
    }
    job.master_addr = FormatIpv4(address.value());
  }
  // With --network-interface, each rank's agent replaces MASTER_ADDR with rank 0's address on
  // the interface, and HVDRUN_HOST_ADDR with its own (agent/mpi_rank.h).
  job.network_interfaces = options_.network_interfaces;
  job.master_port = FindFreePort();
  job.rendezvous_addr = job_address;
  job.rendezvous_port = rendezvous_->port();
  job.secret = secret_;
  MpiCommand command = BuildMpiCommand(assignment_, options_, job, agent_path_, host);
  Verbose("rendezvous service on " + job_address + ":" + std::to_string(job.rendezvous_port));
  Verbose("job " + job_id_ + ": " + std::to_string(assignment_.size()) +
          " ranks; MASTER_ADDR=" + job.master_addr + " MASTER_PORT=" + std::to_string(job.master_port));
  Verbose("running: " + ShellJoin(command.argv));

  if (Status status = StartMpirun(command); !status.ok()) {
    std::fprintf(stderr, "hvdrun: %s\n", status.message().c_str());
    return kExitLaunchFailure;
  }
  Verbose("mpirun started (pid " + std::to_string(mpirun_pid_) + ")");

  while (!mpirun_reaped_ || ((out_.fd.valid() || err_.fd.valid()) && Clock::now() < drain_deadline_)) {
    PollOnce();
    output_.Flush();
  }
  FinishOutput();
  Verbose(MpirunEnd());
  bool any_record = CollectRecords();
  int exit_code = Report(any_record);
  if (any_record || interrupt_signal_ != 0) {
    if (Status status = PublishResults(rendezvous_->Reports(), assignment_, options_, job_id_);
        !status.ok()) {
      std::fprintf(stderr, "hvdrun: %s\n", status.message().c_str());
      if (exit_code == 0) exit_code = kExitResults;
    }
  }
  return exit_code;
}

Status MpiJob::StartMpirun(const MpiCommand& command) {
  // Everything the child needs is prepared before fork: hvdrun has other threads, so the child may
  // only make async-signal-safe calls.
  std::vector<std::string> argv = command.argv;
  std::vector<std::string> env = MpirunEnvironment(command.env);
  std::vector<char*> argv_pointers = CStrings(argv);
  std::vector<char*> env_pointers = CStrings(env);
  Pipe out;
  Pipe err;
  Pipe exec_status;  // tells a missing mpirun apart from one that started
  if (!MakePipe(&out) || !MakePipe(&err) || !MakePipe(&exec_status)) {
    return Status::Error(std::string("--mpi: cannot create pipes for mpirun: ") + std::strerror(errno));
  }
  const pid_t hvdrun_pid = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    return Status::Error(std::string("--mpi: cannot start mpirun: fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    // A SIGKILLed hvdrun still stops mpirun, which then stops the ranks.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != hvdrun_pid) ::_exit(127);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::dup2(out.write.get(), STDOUT_FILENO);
    ::dup2(err.write.get(), STDERR_FILENO);
    ::execvpe(argv_pointers[0], argv_pointers.data(), env_pointers.data());
    int error = errno;
    ssize_t ignored = ::write(exec_status.write.get(), &error, sizeof(error));
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  mpirun_pid_ = pid;
  out.write.Reset();
  err.write.Reset();
  exec_status.write.Reset();
  int exec_error = 0;
  ssize_t n;
  do {
    n = ::read(exec_status.read.get(), &exec_error, sizeof(exec_error));
  } while (n < 0 && errno == EINTR);
  if (n == sizeof(exec_error)) {
    ::waitpid(pid, nullptr, 0);
    mpirun_pid_ = -1;
    return Status::Error("--mpi: cannot run 'mpirun': " + std::string(std::strerror(exec_error)) +
                         " (install Open MPI's mpirun: apt-get install openmpi-bin)");
  }
  SetNonBlocking(out.read.get());
  SetNonBlocking(err.read.get());
  out_.fd = std::move(out.read);
  err_.fd = std::move(err.read);
  return Status::Ok();
}

void MpiJob::PollOnce() {
  std::vector<pollfd> fds = {{signals_.get(), POLLIN, 0}};
  std::vector<Stream*> owners = {nullptr};
  for (Stream* stream : {&out_, &err_}) {
    if (!stream->fd.valid()) continue;
    fds.push_back({stream->fd.get(), POLLIN, 0});
    owners.push_back(stream);
  }
  int timeout = -1;
  if (mpirun_reaped_) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(drain_deadline_ - Clock::now());
    timeout = static_cast<int>(std::max<int64_t>(left.count(), 0));
  }
  if (::poll(fds.data(), fds.size(), timeout) <= 0) return;
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents == 0) continue;
    if (owners[i] == nullptr) {
      HandleSignals();
    } else {
      ReadStream(*owners[i]);
    }
  }
}

void MpiJob::HandleSignals() {
  signalfd_siginfo info;
  while (::read(signals_.get(), &info, sizeof(info)) == sizeof(info)) {
    int sig = static_cast<int>(info.ssi_signo);
    if (sig == SIGCHLD) {
      if (!mpirun_reaped_ && ::waitpid(mpirun_pid_, &mpirun_status_, WNOHANG) == mpirun_pid_) {
        mpirun_reaped_ = true;
        drain_deadline_ = Clock::now() + kDrainWait;
      }
      continue;
    }
    if (interrupt_signal_ != 0 && sig == SIGINT) {
      std::fprintf(stderr, "hvdrun: second interrupt: killing every rank now\n");
      // The agents see mpirun die and SIGKILL their ranks; those already known are killed here too.
      if (!mpirun_reaped_) ::killpg(mpirun_pid_, SIGKILL);
      KillUnfinishedRanks();
      killed_ranks_ = true;
      continue;
    }
    if (interrupt_signal_ == 0) {
      interrupt_signal_ = sig;
      std::fprintf(stderr, "hvdrun: %s received: stopping every rank\n", SignalName(sig).c_str());
      if (!mpirun_reaped_) ::kill(mpirun_pid_, SIGTERM);
    }
  }
}

void MpiJob::ReadStream(Stream& stream) {
  MpirunOutputParser::Sink sink{
      [this](int rank, protocol::OutputStream tagged, std::string_view bytes) {
        RouteTagged(rank, tagged, bytes);
      },
      [this](std::string_view line) { PrintMpirunLines(banners_.Add(std::string(line))); }};
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

void MpiJob::RouteTagged(int rank, protocol::OutputStream stream, std::string_view bytes) {
  auto [it, added] = lines_.try_emplace({rank, stream}, kMaxLinePiece);
  it->second.Feed(bytes, [&](std::string_view data, bool newline) {
    output_.Write(protocol::RankOutput{rank, stream, newline, std::string(data)});
  });
}

void MpiJob::PrintMpirunLines(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fputc('\n', stderr);
  }
}

void MpiJob::FinishOutput() {
  MpirunOutputParser::Sink sink{
      [this](int rank, protocol::OutputStream tagged, std::string_view bytes) {
        RouteTagged(rank, tagged, bytes);
      },
      [this](std::string_view line) { PrintMpirunLines(banners_.Add(std::string(line))); }};
  for (Stream* stream : {&out_, &err_}) {
    if (!stream->fd.valid()) continue;
    stream->parser.Finish(sink);
    stream->fd.Reset();
  }
  for (auto& [key, splitter] : lines_) {
    const int rank = key.first;
    const protocol::OutputStream stream = key.second;
    splitter.Finish([&](std::string_view data, bool newline) {
      output_.Write(protocol::RankOutput{rank, stream, newline, std::string(data)});
    });
  }
  output_.Flush();
}

void MpiJob::KillUnfinishedRanks() {
  std::map<std::string, std::string> exits = rendezvous_->ValuesWithPrefix(kRankExitKeyPrefix);
  for (const auto& [key, value] : rendezvous_->ValuesWithPrefix(kRankStartedKeyPrefix)) {
    int rank = RankOfKey(key, kRankStartedKeyPrefix);
    StatusOr<RankStartedRecord> started = DecodeRankStartedRecord(value);
    // The group holds the rank, its agent and what the rank started. On another host, the rank's
    // agent sees its daemon die with mpirun and kills it there.
    if (rank < 0 || rank >= assignment_.size() ||
        !IsLocalHost(assignment_.hosts()[assignment_.placement(rank).host_index].host)) {
      continue;
    }
    if (started.ok() && !exits.contains(RankExitKey(rank))) {
      ::killpg(started.value().process_group, SIGKILL);
    }
  }
}

bool MpiJob::CollectRecords() {
  const int size = assignment_.size();
  std::map<std::string, std::string> started = rendezvous_->ValuesWithPrefix(kRankStartedKeyPrefix);
  std::map<std::string, std::string> exits = rendezvous_->ValuesWithPrefix(kRankExitKeyPrefix);
  auto unfinished = [&] {
    return std::any_of(started.begin(), started.end(), [&](const auto& entry) {
      return !exits.contains(RankExitKey(RankOfKey(entry.first, kRankStartedKeyPrefix)));
    });
  };
  // mpirun that exited has seen every agent end. Agents that outlived a killed mpirun are still
  // stopping their ranks; their records follow, or hvdrun kills what is left of them.
  if (WIFSIGNALED(mpirun_status_) && !killed_ranks_) {
    Clock::time_point deadline = Clock::now() + kRecordWait;
    while (unfinished() && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      exits = rendezvous_->ValuesWithPrefix(kRankExitKeyPrefix);
    }
    KillUnfinishedRanks();
  }

  std::vector<bool> has_start(size, false);
  for (const auto& [key, value] : started) {
    int rank = RankOfKey(key, kRankStartedKeyPrefix);
    StatusOr<RankStartedRecord> record = DecodeRankStartedRecord(value);
    if (!record.ok() || rank < 0 || rank >= size) {
      std::fprintf(stderr, "hvdrun: rendezvous: ignoring the record '%s': %s\n", key.c_str(),
                   record.ok() ? "it is not about a rank of this job" : record.status().message().c_str());
      continue;
    }
    has_start[rank] = true;
    outcomes_[rank].pid = record.value().pid;
  }
  for (const auto& [key, value] : exits) {
    int rank = RankOfKey(key, kRankExitKeyPrefix);
    StatusOr<RankExitRecord> record = DecodeRankExitRecord(value);
    if (!record.ok() || rank < 0 || rank >= size || record.value().exit.rank != rank) {
      std::fprintf(stderr, "hvdrun: rendezvous: ignoring the record '%s': %s\n", key.c_str(),
                   record.ok() ? "it is not about a rank of this job" : record.status().message().c_str());
      continue;
    }
    RankOutcome& outcome = outcomes_[rank];
    outcome.exited = true;
    outcome.exit = record.value().exit;
    if (record.value().pid > 0) outcome.pid = record.value().pid;
    stop_requested_[rank] = record.value().stop_requested;
    end_unix_ns_[rank] = record.value().end_unix_ns;
    // Ended by the stop's own signals: stopped. Failing on its own while stopping: failed.
    outcome.stopped_by_hvdrun = record.value().stop_requested && IsStopSignal(outcome.exit.signal);
    Verbose("rank " + std::to_string(rank) + " ended: " +
            (outcome.exit.signal != 0 ? SignalName(outcome.exit.signal)
                                      : "exit " + std::to_string(outcome.exit.exit_code)));
  }
  bool any_record = !started.empty() || !exits.empty();
  for (RankOutcome& outcome : outcomes_) {
    if (outcome.exited) continue;
    outcome.lost_reason = !has_start[outcome.rank] ? "its program never started"
                          : killed_ranks_          ? "killed by hvdrun"
                                                   : "its hvdrun-agent ended without an exit record";
  }
  ChooseFirstFailure();
  for (RankOutcome& outcome : outcomes_) {
    // Ranks that mpirun stopped or never started because of the failure or an interrupt.
    if (!outcome.exited && outcome.rank != first_failure_ &&
        (first_failure_ >= 0 || interrupt_signal_ != 0)) {
      outcome.stopped_by_hvdrun = true;
    }
  }
  return any_record;
}

void MpiJob::ChooseFirstFailure() {
  // The earliest end of a rank that failed before anything told it to stop; without one (and
  // without an interrupt, which then explains the end), the earliest failure of any kind.
  auto earliest = [&](auto&& eligible) {
    int best = -1;
    for (const RankOutcome& outcome : outcomes_) {
      if (!outcome.Failed() || !eligible(outcome)) continue;
      if (best < 0) {
        best = outcome.rank;
        continue;
      }
      const RankOutcome& current = outcomes_[best];
      // Ranks with an exit record come before lost ones; among them, the earlier end wins.
      bool better = current.exited != outcome.exited
                        ? outcome.exited
                        : outcome.exited && end_unix_ns_[outcome.rank] < end_unix_ns_[best];
      if (better) best = outcome.rank;
    }
    return best;
  };
  first_failure_ = earliest([&](const RankOutcome& o) { return o.exited && !stop_requested_[o.rank]; });
  if (first_failure_ < 0 && interrupt_signal_ == 0) {
    first_failure_ = earliest([](const RankOutcome& o) { return !o.stopped_by_hvdrun; });
  }
}

int MpiJob::Report(bool any_record) {
  bool every_rank_succeeded =
      std::none_of(outcomes_.begin(), outcomes_.end(), [](const RankOutcome& o) { return o.Failed(); });
  bool mpirun_failed = !WIFEXITED(mpirun_status_) || WEXITSTATUS(mpirun_status_) != 0;
  // mpirun's own account is needed where hvdrun has none.
  bool hvdrun_explains =
      first_failure_ >= 0 || interrupt_signal_ != 0 || (every_rank_succeeded && !mpirun_failed);
  PrintMpirunLines(banners_.Finish(hvdrun_explains));
  if (!any_record && interrupt_signal_ == 0) {
    std::fprintf(stderr, "hvdrun: %s before starting any rank (its messages are above)\n",
                 MpirunEnd().c_str());
    return kExitLaunchFailure;
  }
  if (every_rank_succeeded && mpirun_failed && interrupt_signal_ == 0) {
    std::fprintf(stderr, "hvdrun: %s, although every rank exited with 0 (its messages are above)\n",
                 MpirunEnd().c_str());
    return WIFEXITED(mpirun_status_) ? WEXITSTATUS(mpirun_status_) : 128 + WTERMSIG(mpirun_status_);
  }
  return ReportJobEnd(outcomes_, first_failure_, interrupt_signal_, output_);
}

std::string MpiJob::MpirunEnd() const {
  if (WIFSIGNALED(mpirun_status_)) return "mpirun was killed by " + SignalName(WTERMSIG(mpirun_status_));
  return "mpirun exited with code " + std::to_string(WEXITSTATUS(mpirun_status_));
}

void MpiJob::Verbose(const std::string& line) const {
  if (options_.verbose) std::fprintf(stderr, "hvdrun: %s\n", line.c_str());
}

}  // namespace hvdrun
