// hvdrun-test-horovod-rank: a rank program for the tests of Horovod's variables in libhvdrun
// (tests/e2e/horovodrun_e2e_test.cc). It sets what its --set NAME=VALUE arguments say, as a
// Horovod script sets os.environ before hvd.init(), initialises its runtime from the environment
// with negotiation (as hvdrun.torch does), then:
//
//   allreduce          one named allreduce "x"; prints "rank R: backend B: sum S" on stdout
//   late SECONDS       the same, rank 1 submitting "x" SECONDS late (a stall)
//   late-init SECONDS  the same, rank 1 initialising SECONDS late (the bootstrap's timeout)
//   busy SECONDS       in call order (no negotiation), one unnamed allreduce, rank 1 working SECONDS
//                      in user code before it (a busy rank, which the others wait for)
//   stop               a named allreduce "warmup" on every rank, then rank 1 stops itself (SIGSTOP)
//                      before "x", which the others submit and wait for (a stuck rank)
//   skip               "warmup" on every rank, then the others allreduce "a" and "b", and rank 1
//                      skips "a": it submits "b" only (the ranks diverge; nothing finishes)
//   stuck-in-backend   allreduces of 16 MiB named "big.1", "big.2", ... on every rank; rank 1 stops
//                      itself (SIGSTOP) as soon as its progress board shows it inside the backend,
//                      so that the others wait inside the backend for a collective every rank submitted
//   loop SECONDS       a named allreduce "step" every 20 ms for about SECONDS on every rank (a
//                      healthy job), then prints the sum as allreduce does
//   steps N            N training-like steps, each four named allreduces ("grad0" ... "grad3", 64 Ki
//                      floats each) submitted together, rank R computing 1 + 2R ms before each step
//                      (ranks whose timings differ), then sends its report (Runtime::SendReport)
//   affinity           prints "rank R: collective thread on core C" for the thread of this process
//                      pinned to one core other than the main thread ("none" when there is none)
//
// An init or collective error is printed as "rank R: ERROR" on stderr, and the exit code is 1.
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/env_names.h"
#include "common/progress/progress_board.h"
#include "hvdrun/runtime.h"

namespace {

int OwnRank() {
  const char* rank = std::getenv("HVDRUN_RANK");
  return rank != nullptr ? std::atoi(rank) : -1;
}

void SleepSeconds(double seconds) {
  std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
}

// The one core a thread of this process (not the main one) is pinned to, or -1.
int PinnedThreadCore() {
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) return -1;
  int core = -1;
  while (dirent* entry = ::readdir(tasks)) {
    const pid_t tid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (tid <= 0 || tid == ::getpid()) continue;
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    if (::sched_getaffinity(tid, sizeof(cpus), &cpus) != 0 || CPU_COUNT(&cpus) != 1) continue;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &cpus)) core = cpu;
    }
  }
  ::closedir(tasks);
  return core;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "rank %d: %s\n", OwnRank(), message.c_str());
  return 1;
}

// Stops this process (SIGSTOP) once its progress board (HVDRUN_PROGRESS_FILE, which the rank's agent
// gives it) shows a collective inside the backend; returns at once without a board.
void StopInsideTheBackend() {
  const char* board = std::getenv(hvdrun::env::kProgressFile);
  if (board == nullptr) return;
  for (;;) {
    hvdrun::protocol::RankProgress progress;
    if (hvdrun::progress::ReadProgressBoard(board, false, &progress).ok() && progress.in_backend) {
      ::raise(SIGSTOP);
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

hvdrun::Status StuckInBackend(hvdrun::Runtime& rt) {
  if (rt.rank() == 1 && std::getenv(hvdrun::env::kProgressFile) == nullptr) {
    return hvdrun::Status::Error("stuck-in-backend needs the progress board hvdrun's agent gives a rank");
  }
  std::vector<float> values(size_t{4} << 20, 1.0F);
  std::thread stopper;
  if (rt.rank() == 1) stopper = std::thread(StopInsideTheBackend);
  hvdrun::Status status = hvdrun::Status::Ok();
  for (int step = 1; step <= 1000 && status.ok(); ++step) {
    status = rt.Allreduce("big." + std::to_string(step), values.data(), values.data(), values.size(),
                          hvdrun::DataType::kFloat32, hvdrun::ReduceOp::kSum);
  }
  if (stopper.joinable()) stopper.join();
  return status;
}

// Every rank's "warmup", then "a" and "b", which rank 1 submits as "b" only.
hvdrun::Status SkipOneName(hvdrun::Runtime& rt) {
  float value = 1;
  for (const char* name : {"warmup", "a", "b"}) {
    if (rt.rank() == 1 && std::string(name) == "a") continue;
    hvdrun::Status status =
        rt.Allreduce(name, &value, &value, 1, hvdrun::DataType::kFloat32, hvdrun::ReduceOp::kSum);
    if (!status.ok()) return status;
  }
  return hvdrun::Status::Ok();
}

hvdrun::Status Loop(hvdrun::Runtime& rt, double seconds) {
  const int steps = static_cast<int>(seconds * 50);
  for (int step = 0; step < steps; ++step) {
    float value = 1;
    hvdrun::Status status =
        rt.Allreduce("step", &value, &value, 1, hvdrun::DataType::kFloat32, hvdrun::ReduceOp::kSum);
    if (!status.ok()) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return hvdrun::Status::Ok();
}

// `steps` steps of four named allreduces (see above), then the rank's report.
int Steps(hvdrun::Runtime& rt, int steps) {
  std::vector<std::vector<float>> grads(4, std::vector<float>(size_t{1} << 16, 1.0f));
  for (int step = 0; step < steps; ++step) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1 + 2 * rt.rank()));
    std::vector<hvdrun::CollectiveHandle> handles;
    for (size_t i = 0; i < grads.size(); ++i) {
      handles.push_back(rt.AllreduceAsync("grad" + std::to_string(i), grads[i].data(), grads[i].data(),
                                          grads[i].size(), hvdrun::DataType::kFloat32,
                                          hvdrun::ReduceOp::kAverage));
    }
    for (hvdrun::CollectiveHandle& handle : handles) {
      if (hvdrun::Status status = handle.Wait(); !status.ok()) return Fail(status.message());
    }
  }
  if (hvdrun::Status sent = rt.SendReport(R"({"summary": {}})"); !sent.ok()) return Fail(sent.message());
  std::printf("rank %d: %d steps\n", rt.rank(), steps);
  return 0;
}

int Run(const std::string& mode, double seconds) {
  if (mode == "late-init" && OwnRank() == 1) SleepSeconds(seconds);
  hvdrun::StatusOr<std::unique_ptr<hvdrun::Runtime>> runtime = hvdrun::Runtime::InitFromEnvironment(
      nullptr, mode == "busy" ? hvdrun::CollectiveOrder::kCallOrder : hvdrun::CollectiveOrder::kNegotiated);
  if (!runtime.ok()) return Fail(runtime.status().message());
  hvdrun::Runtime& rt = *runtime.value();
  if (mode == "affinity") {
    const int core = PinnedThreadCore();
    std::printf("rank %d: collective thread on core %s\n", rt.rank(),
                core < 0 ? "none" : std::to_string(core).c_str());
    return 0;
  }
  if (mode == "steps") return Steps(rt, static_cast<int>(seconds));
  if ((mode == "late" || mode == "busy") && rt.rank() == 1) SleepSeconds(seconds);
  if (mode == "stuck-in-backend" || mode == "skip") {
    hvdrun::Status status = mode == "skip" ? SkipOneName(rt) : StuckInBackend(rt);
    return status.ok() ? 0 : Fail(status.message());
  }
  if (mode == "loop") {
    hvdrun::Status status = Loop(rt, seconds);
    if (!status.ok()) return Fail(status.message());
  }
  if (mode == "stop") {
    float warmup = 1;
    hvdrun::Status done =
        rt.Allreduce("warmup", &warmup, &warmup, 1, hvdrun::DataType::kFloat32, hvdrun::ReduceOp::kSum);
    if (!done.ok()) return Fail(done.message());
    if (rt.rank() == 1) ::raise(SIGSTOP);
  }
  float value = static_cast<float>(rt.rank() + 1);
  hvdrun::Status status =
      mode == "busy"
          ? rt.Allreduce(&value, &value, 1, hvdrun::DataType::kFloat32, hvdrun::ReduceOp::kSum)
          : rt.Allreduce("x", &value, &value, 1, hvdrun::DataType::kFloat32, hvdrun::ReduceOp::kSum);
  if (!status.ok()) return Fail(status.message());
  std::printf("rank %d: backend %s: sum %g\n", rt.rank(),
              std::string(hvdrun::BackendName(rt.backend())).c_str(), static_cast<double>(value));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  size_t i = 0;
  for (; i + 1 < args.size() && args[i] == "--set"; i += 2) {
    const size_t equals = args[i + 1].find('=');
    if (equals == std::string::npos) return Fail("--set " + args[i + 1] + ": expected NAME=VALUE");
    ::setenv(args[i + 1].substr(0, equals).c_str(), args[i + 1].substr(equals + 1).c_str(), 1);
  }
  if (i == args.size()) return Fail("usage: hvdrun-test-horovod-rank [--set NAME=VALUE]... MODE [SECONDS]");
  const std::string mode = args[i];
  const double seconds = i + 1 < args.size() ? std::atof(args[i + 1].c_str()) : 0;
  if (mode != "allreduce" && mode != "late" && mode != "late-init" && mode != "busy" && mode != "affinity" &&
      mode != "stop" && mode != "skip" && mode != "stuck-in-backend" && mode != "loop" && mode != "steps") {
    return Fail("unknown mode '" + mode + "'");
  }
  return Run(mode, seconds);
}
