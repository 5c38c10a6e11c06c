#include "launcher/rank_launcher.h"

namespace hvdrun {

void PollRankLauncher(RankLauncher& launcher, std::vector<pollfd>& fds,
                      const std::function<void()>& own_ready) {
  const size_t own = fds.size();
  launcher.AddPollFds(fds);
  if (::poll(fds.data(), fds.size(), launcher.PollTimeoutMs()) < 0) {
    for (pollfd& fd : fds) fd.revents = 0;  // EINTR: nothing is ready
  }
  if (own_ready) own_ready();
  launcher.Service(fds.data() + own, fds.size() - own);
}

}  // namespace hvdrun
