// hvdrun-test-rank: the rank program of the end-to-end tests. Deterministic, and driven entirely
// by its arguments and the HVDRUN_* variables hvdrun gives it.
//
//   env NAME...        prints NAME=VALUE (or "NAME unset") per name on stdout, then one stderr line
//   argv ARG...        prints argc=N, then argv[I]=<ARG> per argument on stdout
//   partial            stdout and stderr each end with a line that has no newline
//   long-line BYTES    prints a BYTES-long line, then the line "after", on stdout
//   log-bytes          writes RankLogBytes() (tests/e2e/rank_log_bytes.h) to stdout and stderr
//   job DIR [--fail RANK:CODE|RANK:SIGNAME] [--wait-go] [--ignore-term] [--grandchild]
//       prints "rank R ready" on stderr and writes its RankRecord to DIR. The rank named by --fail
//       then waits until every rank has written its record (and, with --wait-go, until DIR/go
//       exists), prints "rank R failing: ..." on stderr and exits with CODE or raises SIGNAME
//       (e.g. SIGSEGV). Every other rank sleeps for a minute. --ignore-term: ignore SIGTERM.
//       --grandchild: first start a child that sleeps for a minute, in the rank's process group.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/rank_log_bytes.h"
#include "tests/e2e/rank_record.h"

namespace hvdrun::e2e {
namespace {

// Exit codes of this program's own errors, unlike any code a test asks a rank to exit with.
constexpr int kBadArguments = 90;
constexpr int kTestSetupFailed = 91;
// How long a rank that is waiting to be stopped lives if nothing stops it.
constexpr std::chrono::seconds kIdleLifetime{60};
constexpr std::chrono::seconds kWaitForOtherRanks{30};

int OwnRank() {
  const char* rank = std::getenv("HVDRUN_RANK");
  return rank != nullptr ? std::atoi(rank) : -1;
}

void WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) std::exit(kTestSetupFailed);
    done += static_cast<size_t>(n);
  }
}

// Sleeps until `duration` has passed, whatever signals arrive in between.
void SleepFor(std::chrono::steady_clock::duration duration) {
  std::chrono::steady_clock::time_point end = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < end) std::this_thread::sleep_until(end);
}

bool FileExists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// SIGSEGV or SEGV → its number; 0 when unknown.
int SignalNumber(std::string name) {
  if (name.rfind("SIG", 0) == 0) name = name.substr(3);
  for (int sig = 1; sig < NSIG; ++sig) {
    const char* abbrev = ::sigabbrev_np(sig);
    if (abbrev != nullptr && name == abbrev) return sig;
  }
  return 0;
}

int PrintEnvironment(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) {
    const char* value = std::getenv(name.c_str());
    text += value != nullptr ? name + "=" + value + "\n" : name + " unset\n";
  }
  WriteAll(STDOUT_FILENO, text);
  WriteAll(STDERR_FILENO, "rank " + std::to_string(OwnRank()) + ": environment printed\n");
  return 0;
}

int PrintArguments(const std::vector<std::string>& args) {
  std::string text = "argc=" + std::to_string(args.size()) + "\n";
  for (size_t i = 0; i < args.size(); ++i) text += "argv[" + std::to_string(i) + "]=<" + args[i] + ">\n";
  WriteAll(STDOUT_FILENO, text);
  return 0;
}

int WritePartialLines() {
  WriteAll(STDOUT_FILENO, "first line\nno newline at end");
  WriteAll(STDERR_FILENO, "error line\nerror without newline");
  return 0;
}

int WriteLongLine(size_t bytes) {
  std::string line;
  for (size_t i = 0; i < bytes; ++i) line.push_back(static_cast<char>('a' + i % 26));
  WriteAll(STDOUT_FILENO, line + "\nafter\n");
  return 0;
}

int WriteLogBytes() {
  WriteAll(STDOUT_FILENO, RankLogBytes(OwnRank(), true));
  WriteAll(STDERR_FILENO, RankLogBytes(OwnRank(), false));
  return 0;
}

struct JobOptions {
  std::string dir;
  int fail_rank = -1;
  int fail_exit_code = 0;
  int fail_signal = 0;
  bool wait_go = false;
  bool ignore_term = false;
  bool grandchild = false;
};

bool ParseJobOptions(const std::vector<std::string>& args, JobOptions* options) {
  if (args.empty()) return false;
  options->dir = args[0];
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--wait-go") {
      options->wait_go = true;
    } else if (arg == "--ignore-term") {
      options->ignore_term = true;
    } else if (arg == "--grandchild") {
      options->grandchild = true;
    } else if (arg == "--fail" && i + 1 < args.size()) {
      const std::string& value = args[++i];
      size_t colon = value.find(':');
      if (colon == std::string::npos) return false;
      options->fail_rank = std::atoi(value.substr(0, colon).c_str());
      std::string outcome = value.substr(colon + 1);
      if (outcome.rfind("SIG", 0) == 0) {
        options->fail_signal = SignalNumber(outcome);
        if (options->fail_signal == 0) return false;
      } else {
        options->fail_exit_code = std::atoi(outcome.c_str());
      }
    } else {
      return false;
    }
  }
  return true;
}

[[noreturn]] void Fail(int rank, const JobOptions& options) {
  if (options.fail_signal == 0) {
    WriteAll(STDERR_FILENO, "rank " + std::to_string(rank) + " failing: exit code " +
                                std::to_string(options.fail_exit_code) + "\n");
    std::exit(options.fail_exit_code);
  }
  WriteAll(STDERR_FILENO, "rank " + std::to_string(rank) + " failing: raising signal " +
                              std::to_string(options.fail_signal) + "\n");
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);  // a crash on purpose leaves no core file behind
  ::signal(options.fail_signal, SIG_DFL);
  ::raise(options.fail_signal);
  std::exit(kTestSetupFailed);
}

int RunJob(const std::vector<std::string>& args) {
  JobOptions options;
  if (!ParseJobOptions(args, &options)) {
    std::fprintf(stderr, "hvdrun-test-rank job: bad arguments\n");
    return kBadArguments;
  }
  const int rank = OwnRank();
  const char* size_text = std::getenv("HVDRUN_SIZE");
  const int size = size_text != nullptr ? std::atoi(size_text) : 0;
  if (options.ignore_term) ::signal(SIGTERM, SIG_IGN);

  RankRecord record{rank, ::getpid(), ::getppid(), 0};
  if (options.grandchild) {
    pid_t child = ::fork();
    if (child < 0) return kTestSetupFailed;
    if (child == 0) {
      SleepFor(kIdleLifetime);
      ::_exit(0);
    }
    record.grandchild_pid = child;
  }
  WriteAll(STDERR_FILENO, "rank " + std::to_string(rank) + " ready\n");
  if (!WriteRankRecord(options.dir, record)) return kTestSetupFailed;

  if (rank != options.fail_rank) {
    SleepFor(kIdleLifetime);
    return 0;
  }
  auto everyone_ready = [&] {
    for (int other = 0; other < size; ++other) {
      if (!FileExists(RankRecordPath(options.dir, other))) return false;
    }
    return !options.wait_go || FileExists(GoFilePath(options.dir));
  };
  auto give_up = std::chrono::steady_clock::now() + kWaitForOtherRanks;
  while (!everyone_ready()) {
    if (std::chrono::steady_clock::now() > give_up) return kTestSetupFailed;
    SleepFor(std::chrono::milliseconds(5));
  }
  Fail(rank, options);
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: hvdrun-test-rank env|argv|partial|long-line|log-bytes|job ...\n");
    return kBadArguments;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "env") return PrintEnvironment(args);
  if (command == "argv") return PrintArguments(args);
  if (command == "partial") return WritePartialLines();
  if (command == "long-line" && args.size() == 1) {
    return WriteLongLine(std::strtoul(args[0].c_str(), nullptr, 10));
  }
  if (command == "log-bytes") return WriteLogBytes();
  if (command == "job") return RunJob(args);
  std::fprintf(stderr, "hvdrun-test-rank: unknown command '%s'\n", command.c_str());
  return kBadArguments;
}

}  // namespace
}  // namespace hvdrun::e2e

int main(int argc, char** argv) { return hvdrun::e2e::Main(argc, argv); }
