#include "launcher/rank_launcher.h"

namespace hvdrun {

void PollRankLauncher(RankLauncher& launcher, std::vector<pollfd>& fds,
                      const std::function<void()>& own_ready, int wake_in_ms) {
  const size_t own = fds.size();
  launcher.AddPollFds(fds);
  int timeout_ms = launcher.PollTimeoutMs();
  if (wake_in_ms >= 0 && (timeout_ms < 0 || wake_in_ms < timeout_ms)) timeout_ms = wake_in_ms;
  if (::poll(fds.data(), fds.size(), timeout_ms) < 0) {
    for (pollfd& fd : fds) fd.revents = 0;  // EINTR: nothing is ready
  }
  if (own_ready) own_ready();
  launcher.Service(fds.data() + own, fds.size() - own);
}

}  // namespace hvdrun
