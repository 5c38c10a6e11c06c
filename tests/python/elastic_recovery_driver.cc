// A lost rank in an elastic hvdrun.torch job, with this program playing hvdrun's elastic driver
// (docs/elastic.md: the contract): it serves the job's rendezvous on 127.0.0.1, starts 3 ranks of
// tests/python/elastic_recovery.py with round 0's environment, SIGKILLs rank 2 once it is well into
// training, writes round 1 (the survivors, 2 ranks) into the store, and checks that both survivors exit 0
// having re-formed in round 1 with identical parameters, the full step count and each sample committed
// once (the ranks record their samples in a directory this program makes and removes).
//
//   hvdrun_elastic_recovery_driver PYTHON SCRIPT SHM(1|0)   (PYTHONPATH: the build tree's package)
//
// Every rank is killed by its pid when the program fails or runs past its limit (60 s).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/protocol/rendezvous_client.h"
#include "launcher/rendezvous/rendezvous_server.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Ranks {
  std::vector<pid_t> pids;
  ~Ranks() {
    for (pid_t pid : pids) {
      if (pid > 0) ::kill(pid, SIGKILL);
    }
    for (pid_t pid : pids) {
      if (pid > 0) ::waitpid(pid, nullptr, 0);
    }
  }
};

// A directory of the job's ranks, removed with what they wrote in it.
struct JobDir {
  explicit JobDir(std::filesystem::path where) : path(std::move(where)) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~JobDir() {
    std::error_code error;
    std::filesystem::remove_all(path, error);
  }
  std::filesystem::path path;
};

pid_t StartRank(int rank, int port, const std::string& secret, const char* python, const char* script,
                const char* shm, const std::string& progress, const std::string& samples) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const auto set = [](const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); };
  set("HVDRUN_RANK", std::to_string(rank));
  set("HVDRUN_SIZE", "3");
  set("HVDRUN_LOCAL_RANK", std::to_string(rank));
  set("HVDRUN_LOCAL_SIZE", "3");
  set("HVDRUN_CROSS_RANK", "0");
  set("HVDRUN_CROSS_SIZE", "1");
  set("HVDRUN_BACKEND", "gloo");
  set("HVDRUN_RENDEZVOUS_ADDR", "127.0.0.1");
  set("HVDRUN_RENDEZVOUS_PORT", std::to_string(port));
  set("HVDRUN_SECRET", secret);
  set("HVDRUN_HOST_ADDR", "127.0.0.1");
  set("HVDRUN_SHM", shm);
  set("HVDRUN_ELASTIC", "1");
  set("HVDRUN_WORKER_ID", "localhost/" + std::to_string(rank) + "/0");
  set("HVDRUN_ROUND", "0");
  set("HVDRUN_ELASTIC_TIMEOUT_SECONDS", "30");
  set("HOROVOD_GLOO_TIMEOUT_SECONDS", "10");
  set("ELASTIC_TEST_PROGRESS", progress);
  set("ELASTIC_TEST_SAMPLES", samples);
  set("ELASTIC_TEST_ROUND", "1");  // what the survivors must end in
  set("ELASTIC_TEST_RESETS", "2");
  ::execl(python, python, script, static_cast<char*>(nullptr));
  std::perror("exec");
  ::_exit(127);
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "elastic_recovery_driver: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return Fail("usage: hvdrun_elastic_recovery_driver PYTHON SCRIPT SHM(1|0)");
  const std::string secret(64, 'e');
  auto server = hvdrun::RendezvousServer::Start(
      "127.0.0.1", secret, [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
  if (!server.ok()) return Fail(server.status().message());
  const int port = (*server)->port();
  const std::string progress =
      (std::filesystem::temp_directory_path() / ("elastic-progress-" + std::to_string(::getpid()))).string();
  std::filesystem::remove(progress);
  const JobDir samples(std::filesystem::temp_directory_path() /
                       ("elastic-samples-" + std::to_string(::getpid())));
  Ranks ranks;
  for (int rank = 0; rank < 3; ++rank) {
    ranks.pids.push_back(
        StartRank(rank, port, secret, argv[1], argv[2], argv[3], progress, samples.path.string()));
  }
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
  while (!std::filesystem::exists(progress)) {
    if (Clock::now() > deadline) return Fail("rank 2 made no progress within 60 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::filesystem::remove(progress);
  ::kill(ranks.pids[2], SIGKILL);
  ::waitpid(ranks.pids[2], nullptr, 0);
  ranks.pids[2] = 0;
  auto client = hvdrun::RendezvousClient::Connect("127.0.0.1", static_cast<uint16_t>(port), secret,
                                                  std::chrono::seconds(10));
  if (!client.ok()) return Fail(client.status().message());
  for (const auto& [key, value] :
       {std::pair<std::string, std::string>{"elastic/1/rank/localhost/0/0", "0 2 0 2 0 1 localhost"},
        {"elastic/1/rank/localhost/1/0", "1 2 1 2 0 1 localhost"},
        {"elastic/round", "1"}}) {
    if (hvdrun::Status set = (*client)->Set(key, value); !set.ok()) return Fail(set.message());
  }
  for (int rank = 0; rank < 2; ++rank) {
    int status = 0;
    while (::waitpid(ranks.pids[static_cast<size_t>(rank)], &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) return Fail("rank " + std::to_string(rank) + " did not end within 60 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ranks.pids[static_cast<size_t>(rank)] = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      return Fail("survivor " + std::to_string(rank) + " did not exit 0 (wait status " +
                  std::to_string(status) + ")");
    }
  }
  std::printf("elastic_recovery_driver: both survivors ended\n");
  return 0;
}
