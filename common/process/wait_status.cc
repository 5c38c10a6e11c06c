#include "common/process/wait_status.h"

#include <sys/wait.h>

#include <csignal>

namespace hvdrun {

namespace {

// Linux's standard signals by their macros, as glibc's sigabbrev_np names them (which glibc has
// only from 2.32: the relocatable bundle is to load with an older one, docs/bundle-baseline.md).
struct NamedSignal {
  int number;
  const char* name;
};
constexpr NamedSignal kSignals[] = {
    {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},       {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
    {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},     {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
    {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},     {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
    {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"},     {SIGTERM, "SIGTERM"}, {SIGSTKFLT, "SIGSTKFLT"},
    {SIGCHLD, "SIGCHLD"}, {SIGCONT, "SIGCONT"},     {SIGSTOP, "SIGSTOP"}, {SIGTSTP, "SIGTSTP"},
    {SIGTTIN, "SIGTTIN"}, {SIGTTOU, "SIGTTOU"},     {SIGURG, "SIGURG"},   {SIGXCPU, "SIGXCPU"},
    {SIGXFSZ, "SIGXFSZ"}, {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"}, {SIGWINCH, "SIGWINCH"},
    {SIGPOLL, "SIGPOLL"}, {SIGPWR, "SIGPWR"},       {SIGSYS, "SIGSYS"},
};

}  // namespace

std::string SignalName(int signal) {
  for (const NamedSignal& named : kSignals) {
    if (named.number == signal) return named.name;
  }
  return "signal " + std::to_string(signal);
}

ExitStatus ExitStatus::FromWaitStatus(int wait_status) {
  if (WIFSIGNALED(wait_status)) return {128 + WTERMSIG(wait_status), WTERMSIG(wait_status)};
  return {WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 0, 0};
}

std::string ExitStatus::Describe() const {
  return signal != 0 ? "killed by " + SignalName(signal) : "exit code " + std::to_string(exit_code);
}

std::string DescribeWaitStatus(int wait_status) {
  if (!WIFEXITED(wait_status) && !WIFSIGNALED(wait_status)) return "ended";
  return ExitStatus::FromWaitStatus(wait_status).Describe();
}

}  // namespace hvdrun
