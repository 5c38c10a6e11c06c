// AgentLauncher's growth while a job runs (agent_launcher.h): one more host's agent, and further
// Launch messages to a running agent.
#include <algorithm>
#include <chrono>

#include "launcher/agents/agent_launcher.h"

namespace hvdrun {

int AgentLauncher::AddHost(const HostSlots& host) {
  agents_.emplace_back();
  StartAgent(agents_.back(), host.host, host.user);
  return static_cast<int>(agents_.size()) - 1;
}

RankLauncher::HostStatus AgentLauncher::StatusOf(int host_index, std::string* why) const {
  const HostAgent& agent = agents_.at(host_index);
  if (agent.failed) {
    *why = agent.failure;
    return agent.answered ? HostStatus::kGone : HostStatus::kFailedToStart;
  }
  if (agent.told_to_stop || (agent.connection != nullptr && agent.connection->stream_closed())) {
    *why = "its agent was told to stop";
    return HostStatus::kGone;
  }
  return agent.answered ? HostStatus::kReady : HostStatus::kReaching;
}

Status AgentLauncher::LaunchMore(int host_index, const std::vector<protocol::RankLaunch>& ranks) {
  HostAgent& agent = agents_.at(host_index);
  std::string why;
  if (StatusOf(host_index, &why) != HostStatus::kReady) {
    return Status::Error("host " + agent.host + ": its agent takes no ranks now (" +
                         (why.empty() ? "it has not answered yet" : why) + ")");
  }
  protocol::Launch message;
  message.kill_grace_ms = static_cast<uint32_t>(kKillGrace.count());
  size_t frame_bytes = protocol::EncodeFrame(protocol::Launch{}).size();
  int next = static_cast<int>(rank_pids_.size());
  for (const protocol::RankLaunch& rank : ranks) {
    // The agent names its processes by these numbers and refuses one it has used before.
    if (rank.rank < next) {
      return Status::Error("host " + agent.host + ": rank number " + std::to_string(rank.rank) +
                           " was used before (the next free one is " + std::to_string(next) + ")");
    }
    next = rank.rank + 1;
    frame_bytes += protocol::EncodedSize(rank);
    if (frame_bytes > protocol::kMaxFrameBytes) {
      return Status::Error(
          "host " + agent.host + ": the new ranks' commands and environments do not fit the " +
          std::to_string(protocol::kMaxFrameBytes) + " bytes of the agent protocol's Launch");
    }
    message.ranks.push_back(rank);
  }
  rank_pids_.resize(next, 0);
  rank_done_.resize(next, false);
  for (const protocol::RankLaunch& rank : message.ranks) agent.ranks.push_back(rank.rank);
  agent.connection->Send(message);
  return Status::Ok();
}

}  // namespace hvdrun
