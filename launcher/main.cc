// hvdrun: the launcher. Parses the command line, then runs the job (launcher/job_run.h) with
// hvdrun's agents (launcher/agents/agent_launcher.h), or with --mpi under mpirun
// (launcher/mpirun/mpirun_launcher.h); or, with --check, checks the hosts (launcher/host_check.h).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "launcher/agents/agent_launcher.h"
#include "launcher/command_line/command_line.h"
#include "launcher/host_check.h"
#include "launcher/job_run.h"
#include "launcher/launch_options.h"
#include "launcher/mpirun/mpirun_launcher.h"

namespace {

// This program's own path; empty when /proc cannot tell.
std::string SelfPath() {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? "" : self.string();
}

// The agent installed beside this hvdrun, so that a build tree or a non-standard prefix works
// without PATH changes; otherwise the first hvdrun-agent in PATH.
std::string LocalAgentPath(const std::string& self) {
  if (!self.empty()) {
    std::filesystem::path beside = std::filesystem::path(self).parent_path() / "hvdrun-agent";
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return "hvdrun-agent";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string self = SelfPath();
  hvdrun::ParsedCommandLine parsed = hvdrun::ParseCommandLine(
      argc, argv, [](const char* name) { return std::getenv(name); }, self);
  if (!parsed.options) {
    if (!parsed.error.empty()) std::fprintf(stderr, "hvdrun: %s\n", parsed.error.c_str());
    return parsed.exit_code;
  }
  hvdrun::LaunchOptions& options = *parsed.options;
  for (const std::string& notice : options.notices) std::fprintf(stderr, "hvdrun: %s\n", notice.c_str());
  const std::string local_agent = LocalAgentPath(self);
  // Without --agent-path, a host whose PATH has no hvdrun-agent is given this machine's own (labs
  // share one install prefix or an NFS home).
  if (!options.remote_agent_path_given && local_agent.find('/') != std::string::npos) {
    options.ssh.agent_fallback_path = local_agent;
  }
  if (options.verbose) {
    if (options.backend) {
      std::fprintf(stderr, "hvdrun: controller %s (%s)\n",
                   std::string(hvdrun::BackendName(*options.backend)).c_str(),
                   options.backend_reason.c_str());
    }
    std::fprintf(stderr, "hvdrun: launcher %s\n", hvdrun::DescribeAgentStart(options).c_str());
    std::fprintf(stderr, "hvdrun: each host's agent has %d s to start (--start-timeout)\n",
                 options.start_timeout_s);
  }
  if (options.check) return hvdrun::RunHostCheck(options, local_agent);
  std::unique_ptr<hvdrun::RankLauncher> launcher;
  if (options.backend == hvdrun::BackendKind::kMpi) {
    if (options.dry_run) return hvdrun::PrintMpirunCommand(options, local_agent);
    launcher = std::make_unique<hvdrun::MpirunLauncher>(options, local_agent);
  } else {
    launcher = std::make_unique<hvdrun::AgentLauncher>(options, local_agent);
  }
  hvdrun::JobRun job(std::move(options), std::move(launcher));
  return job.Run();
}
