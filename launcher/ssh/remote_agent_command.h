// How a host that is not this machine finds hvdrun-agent: one rule for hvdrun's own start over SSH
// (launcher/ssh/ssh_agent_transport.h) and for the ranks that mpirun starts (launcher/mpirun/mpi_command.h).
//
// The agent path is tried first: --agent-path, by default `hvdrun-agent` looked up in the host's
// PATH. Then, when not empty, the fallback: this machine's own agent path
// (SshOptions::agent_fallback_path, set only when --agent-path is not given), for labs that share
// one install prefix or an NFS home, as Open MPI's mpirun run by its absolute path tries its own
// prefix on the other hosts. Both are looked for on the host, by the shell that sshd (or Open MPI's
// daemon) runs the command with, with `command -v`.
#ifndef HVDRUN_LAUNCHER_SSH_REMOTE_AGENT_COMMAND_H_
#define HVDRUN_LAUNCHER_SSH_REMOTE_AGENT_COMMAND_H_

#include <string>

namespace hvdrun {

// A shell command line that exec's the first of `agent_path` and `fallback_path` (skipped when
// empty) that the host has, followed by `args` (shell text, such as "\"$@\""; may be empty). A
// host with neither runs `when_missing` (shell text; may be empty; the shell's own "not found" is
// silenced) and exits with 127; a place that the shell's `command -v` finds but that cannot be
// executed ends the shell with exec's status, 126. Without a fallback, `when_missing` or `args` the
// line is
// `command -v AGENT >/dev/null 2>&1 || exit 127; exec AGENT` (docs/protocol.md).
std::string RemoteAgentCommand(const std::string& agent_path, const std::string& fallback_path,
                               const std::string& args, const std::string& when_missing);

// Why RemoteAgentCommand exited with 127, in one line without host and stage: every place tried,
// and what to do. With a fallback, `agent_path` is a name looked up in the host's PATH.
std::string AgentNotFoundReason(const std::string& agent_path, const std::string& fallback_path);

// Why it exited with 126, in one line without host and stage.
std::string AgentNotExecutableReason(const std::string& agent_path, const std::string& fallback_path);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_SSH_REMOTE_AGENT_COMMAND_H_
