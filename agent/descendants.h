// The end of an agent's life as a child subreaper (PR_SET_CHILD_SUBREAPER): every process its
// ranks started and left behind has become the agent's child, and none may outlive it.
#ifndef HVDRUN_AGENT_DESCENDANTS_H_
#define HVDRUN_AGENT_DESCENDANTS_H_

#include <chrono>

namespace hvdrun {

// How long an agent waits, at its end, for the ranks' last descendants to die.
inline constexpr std::chrono::milliseconds kDescendantsWait{2000};

// SIGKILL to every child of this process (found through /proc: also those that left their rank's
// process group), reaping them, until none is left or `wait` has passed. Returns false, after
// printing one line naming `who` ("hvdrun-agent"), when some still lived at the end. Call it only
// when no child this process still cares about is running: every child is killed.
bool KillAndReapDescendants(std::chrono::milliseconds wait, const char* who);

}  // namespace hvdrun

#endif  // HVDRUN_AGENT_DESCENDANTS_H_
