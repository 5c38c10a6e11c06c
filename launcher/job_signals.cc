#include "launcher/job_signals.h"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace hvdrun {
namespace {

class ProcessSignals : public JobSignals {
 public:
  explicit ProcessSignals(UniqueFd fd) : fd_(std::move(fd)) {}
  int fd() const override { return fd_.get(); }
  std::vector<int> Take() override {
    std::vector<int> taken;
    signalfd_siginfo info;
    while (::read(fd_.get(), &info, sizeof(info)) == sizeof(info)) {
      taken.push_back(static_cast<int>(info.ssi_signo));
    }
    return taken;
  }

 private:
  UniqueFd fd_;
};

}  // namespace

StatusOr<std::unique_ptr<JobSignals>> WatchProcessSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&set, sig);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  UniqueFd fd(::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!fd.valid()) return Status::Error(std::string("cannot watch signals: ") + std::strerror(errno));
  return std::unique_ptr<JobSignals>(std::make_unique<ProcessSignals>(std::move(fd)));
}

}  // namespace hvdrun
