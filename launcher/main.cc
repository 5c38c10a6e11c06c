// hvdrun: the launcher. Parses the command line, then runs the job: with hvdrun's agents
// (launcher/job.h), or with --mpi under mpirun (launcher/mpi_job.h); or, with --check, checks the
// hosts (launcher/host_check.h).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/exit_codes.h"
#include "launcher/host_check.h"
#include "launcher/job.h"
#include "launcher/launch_options.h"
#include "launcher/mpi_job.h"

namespace {

// The agent installed beside this hvdrun, so that a build tree or a non-standard prefix works
// without PATH changes; otherwise the first hvdrun-agent in PATH.
std::string LocalAgentPath() {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    std::filesystem::path beside = self.parent_path() / "hvdrun-agent";
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return "hvdrun-agent";
}

}  // namespace

int main(int argc, char** argv) {
  hvdrun::ParsedCommandLine parsed =
      hvdrun::ParseCommandLine(argc, argv, [](const char* name) { return std::getenv(name); });
  if (!parsed.options) {
    if (!parsed.error.empty()) std::fprintf(stderr, "hvdrun: %s\n", parsed.error.c_str());
    return parsed.exit_code;
  }
  // Without --agent-path, a host whose PATH has no hvdrun-agent is given this machine's own (labs
  // share one install prefix or an NFS home).
  if (std::string local_agent = LocalAgentPath();
      !parsed.options->remote_agent_path_given && local_agent.find('/') != std::string::npos) {
    parsed.options->ssh.agent_fallback_path = local_agent;
  }
  if (parsed.options->check) return hvdrun::RunHostCheck(*parsed.options, LocalAgentPath());
  if (parsed.options->backend == hvdrun::BackendKind::kMpi) {
    hvdrun::MpiJob job(std::move(*parsed.options), LocalAgentPath());
    return job.Run();
  }
  hvdrun::Job job(std::move(*parsed.options), LocalAgentPath());
  return job.Run();
}
