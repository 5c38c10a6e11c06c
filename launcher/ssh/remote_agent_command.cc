#include "launcher/ssh/remote_agent_command.h"

#include "common/shell_words.h"

namespace hvdrun {

std::string RemoteAgentCommand(const std::string& agent_path, const std::string& fallback_path,
                               const std::string& args, const std::string& when_missing) {
  std::string exec_args = args.empty() ? "" : " " + args;
  std::string missing = when_missing.empty() ? "exit 127" : "{ " + when_missing + "; exit 127; }";
  std::string command;
  std::string last = ShellQuote(agent_path);
  if (!fallback_path.empty()) {
    command = "command -v " + last + " >/dev/null 2>&1 && exec " + last + exec_args + "; ";
    last = ShellQuote(fallback_path);
  }
  return command + "command -v " + last + " >/dev/null 2>&1 || " + missing + "; exec " + last + exec_args;
}

std::string AgentNotFoundReason(const std::string& agent_path, const std::string& fallback_path) {
  if (fallback_path.empty()) {
    return "'" + agent_path +
           "' was not found on the host (exit status 127); install hvdrun-agent in its PATH or give "
           "--agent-path";
  }
  return "'" + agent_path + "' was found neither in the host's PATH nor at this machine's agent path '" +
         fallback_path +
         "' (exit status 127); install hvdrun-agent in one of those places or give --agent-path";
}

std::string AgentNotExecutableReason(const std::string& agent_path, const std::string& fallback_path) {
  if (fallback_path.empty()) return "'" + agent_path + "' cannot be executed on the host (exit status 126)";
  return "'" + agent_path + "' in the host's PATH, or else this machine's agent path '" + fallback_path +
         "', cannot be executed on the host (exit status 126)";
}

}  // namespace hvdrun
