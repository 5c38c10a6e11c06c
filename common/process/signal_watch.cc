#include "common/process/signal_watch.h"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "common/process/file_descriptor.h"

namespace hvdrun {
namespace {

class ProcessSignals : public SignalWatch {
 public:
  explicit ProcessSignals(UniqueFd fd) : fd_(std::move(fd)) {}
  int fd() const override { return fd_.get(); }
  std::vector<ReceivedSignal> Take() override {
    std::vector<ReceivedSignal> taken;
    signalfd_siginfo info;
    while (::read(fd_.get(), &info, sizeof(info)) == sizeof(info)) {
      taken.push_back(ReceivedSignal{static_cast<int>(info.ssi_signo), static_cast<pid_t>(info.ssi_pid)});
    }
    return taken;
  }

 private:
  UniqueFd fd_;
};

}  // namespace

StatusOr<std::unique_ptr<SignalWatch>> WatchProcessSignals(std::initializer_list<int> more) {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&set, sig);
  for (int sig : more) sigaddset(&set, sig);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  UniqueFd fd(::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!fd.valid()) return Status::Error(std::string("cannot watch signals: ") + std::strerror(errno));
  return std::unique_ptr<SignalWatch>(std::make_unique<ProcessSignals>(std::move(fd)));
}

}  // namespace hvdrun
