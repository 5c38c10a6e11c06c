// hvdrun-agent: started by hvdrun, once per host, with its control stream on stdin/stdout; or, as
// `hvdrun-agent --mpi-rank -- command...`, by the mpirun of `hvdrun --mpi`, once per rank
// (agent/mpi_rank.h). It is not meant to be run by hand; `hvdrun-agent --help` says so, and
// `hvdrun-agent --version` prints its version.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include <string>
#include <vector>

#include "agent/agent.h"
#include "agent/mpi_rank.h"
#include "common/protocol/agent_protocol.h"
#include "common/version.h"

namespace {

constexpr const char* kHelp =
    "Usage: hvdrun-agent\n"
    "  or:  hvdrun-agent --mpi-rank -- COMMAND [ARGS...]\n"
    "hvdrun's agent on each host of a job. hvdrun starts one per host (a child process on its own\n"
    "machine, over SSH on the others) and speaks to it on stdin/stdout; the agent spawns that host's\n"
    "ranks, watches them and reports their output and exit statuses. It is not run by hand.\n"
    "\n"
    "Options:\n"
    "  --help       Print this help message and exit\n"
    "  --version    Print the version and the agent protocol's version, and exit\n"
    "  --mpi-rank   Run COMMAND as one rank of `hvdrun --mpi` (Open MPI's mpirun starts one per rank)\n"
    "               and send its exit status to hvdrun\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--help") == 0) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("hvdrun-agent %s (protocol %u)\n", hvdrun::kVersion, hvdrun::protocol::kProtocolVersion);
    return 0;
  }
  if (argc >= 2 && std::strcmp(argv[1], "--mpi-rank") == 0) {
    int first = argc >= 3 && std::strcmp(argv[2], "--") == 0 ? 3 : 2;
    if (first >= argc) {
      std::fprintf(stderr,
                   "hvdrun-agent: --mpi-rank: no command given (usage: hvdrun-agent --mpi-rank -- "
                   "command [args...])\n");
      return 2;
    }
    return hvdrun::RunMpiRank(std::vector<std::string>(argv + first, argv + argc));
  }
  if (argc != 1) {
    std::fprintf(stderr,
                 "hvdrun-agent: started by hvdrun, which speaks to it on stdin/stdout; it takes no arguments "
                 "but --help, --version (and --mpi-rank under hvdrun --mpi)\n");
    return 2;
  }
  // The control stream keeps stdout to itself: anything else printed to fd 1 goes to stderr.
  int control_out = ::dup(STDOUT_FILENO);
  if (control_out < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::perror("hvdrun-agent: cannot set up the control stream");
    return 3;
  }
  int control_in = ::dup(STDIN_FILENO);
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (control_in < 0 || null_fd < 0 || ::dup2(null_fd, STDIN_FILENO) < 0) {
    std::perror("hvdrun-agent: cannot set up the control stream");
    return 3;
  }
  ::close(null_fd);
  ::fcntl(control_in, F_SETFD, FD_CLOEXEC);
  ::fcntl(control_out, F_SETFD, FD_CLOEXEC);
  hvdrun::Agent agent{hvdrun::UniqueFd(control_in), hvdrun::UniqueFd(control_out)};
  return agent.Run();
}
