#include "lab/run/interrupt_signals.h"

#include <signal.h>

#include <initializer_list>

namespace hvdrun::lab {
namespace {

volatile sig_atomic_t last_signal = 0;
volatile sig_atomic_t signal_count = 0;
volatile sig_atomic_t status_count = 0;

void CountSignal(int signal) {
  if (signal == SIGUSR1) {
    status_count = status_count + 1;
    return;
  }
  last_signal = signal;
  signal_count = signal_count + 1;
}

}  // namespace

bool InstallInterruptHandlers() {
  struct sigaction action {};
  action.sa_handler = CountSignal;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGUSR1}) {
    if (::sigaction(signal, &action, nullptr) != 0) return false;
  }
  return true;
}

InterruptRequest PendingInterrupts() {
  InterruptRequest request;
  request.signal = last_signal;
  request.count = signal_count;
  request.status_requests = status_count;
  return request;
}

}  // namespace hvdrun::lab
