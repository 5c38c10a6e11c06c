// hvdrun_mpi_backend_check: the MPI backend's harness of the backend conformance cases
// (runtime/backend_conformance.h), one process per rank under mpirun (MPI cannot run ranks as
// threads, so this is a program rather than a gtest), and the checks only MPI has. Registered with
// CTest for 1..4 ranks (runtime/CMakeLists.txt, label integration).
//
//   mpirun -np N hvdrun_mpi_backend_check [--time]
//     Every conformance case; then errors (rank/size mismatch, MPI error codes, counts past MPI's
//     int) and MPI's lifetime: libhvdrun initialises MPI on the thread that creates the backend and
//     finalises it on the thread that destroys it, and the cases run on other threads, one call at a
//     time. --time also times the raw MPI_Allreduce against MpiBackend::Allreduce (float32 sum, in
//     place) at 1, 16 and 64 MiB and prints them on rank 0.
//   mpirun -np N hvdrun_mpi_backend_check --program-init serialized|funneled
//     The program initialises MPI itself: at MPI_THREAD_SERIALIZED the backend works and leaves MPI
//     initialised; at MPI_THREAD_FUNNELED creating the backend is a clear error.
//
// Every failed check prints one line (at most 20 per rank) and the rank exits 1 at the end; a
// collective that returns an error ends the job at once (MPI_Abort), since the other ranks could
// otherwise wait for this one forever.
#include <mpi.h>

#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "runtime/backend.h"
#include "runtime/backend_conformance.h"

namespace hvdrun {
namespace {

constexpr int kMaxReported = 20;

// This rank's failed checks: counted, the first kMaxReported printed. As the conformance cases'
// report, a failed collective ends the job (Fatal).
class Failures : public testing::ConformanceReport {
 public:
  void SetRank(int rank) { rank_ = rank; }

  void Add(const std::string& message) {
    if (++count_ <= kMaxReported) {
      std::fprintf(stderr, "hvdrun_mpi_backend_check: rank %d: %s\n", rank_, message.c_str());
    }
  }

  // Adds `message` unless `ok`.
  void Expect(bool ok, const std::string& message) {
    if (!ok) Add(message);
  }

  void Check(bool ok, const std::string& what) override { Expect(ok, what); }
  [[noreturn]] void CollectiveFailed(const std::string& call, const Status& status) override;

  // Adds a failure unless `status` is an error whose message contains every one of `parts`.
  void ExpectError(const Status& status, std::string_view call, const std::vector<std::string>& parts) {
    if (status.ok()) return Add(std::string(call) + " succeeded; expected an error");
    for (const std::string& part : parts) {
      if (status.message().find(part) == std::string::npos) {
        return Add(std::string(call) + ": the error '" + status.message() + "' lacks '" + part + "'");
      }
    }
  }

  int count() const { return count_; }
  int rank() const { return rank_; }

 private:
  int rank_ = -1;  // -1 until MPI has told it
  int count_ = 0;
};

// A collective that failed: the other ranks may be waiting in it, so the whole job ends.
[[noreturn]] void Fatal(const Failures& failures, const std::string& message) {
  std::fprintf(stderr, "hvdrun_mpi_backend_check: rank %d: %s\n", failures.rank(), message.c_str());
  std::fflush(stderr);
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized != 0 && finalized == 0) MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

void Failures::CollectiveFailed(const std::string& call, const Status& status) {
  Fatal(*this, call + ": " + status.message());
}

void Require(const Failures& failures, const Status& status, const std::string& call) {
  if (!status.ok()) Fatal(failures, call + ": " + status.message());
}

// One thread that runs the functions given to Run, one at a time, each to completion before Run
// returns: the thread that creates and destroys the backend, as the Runtime's collective thread.
class OwnerThread {
 public:
  OwnerThread() : thread_([this] { Loop(); }) {}
  ~OwnerThread() {
    Run(nullptr);
    thread_.join();
  }
  OwnerThread(const OwnerThread&) = delete;
  OwnerThread& operator=(const OwnerThread&) = delete;

  // Runs `task` on the owner thread (nullptr: ends it) and waits for it.
  void Run(std::function<void()> task) {
    std::unique_lock<std::mutex> lock(mutex_);
    const bool stop = task == nullptr;
    tasks_.push_back(std::move(task));
    ++submitted_;
    const int64_t mine = submitted_;
    changed_.notify_all();
    if (!stop) changed_.wait(lock, [this, mine] { return finished_ >= mine; });
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      changed_.wait(lock, [this] { return !tasks_.empty(); });
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      if (task == nullptr) return;
      lock.unlock();
      task();
      lock.lock();
      ++finished_;
      changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> tasks_;  // GUARDED_BY(mutex_)
  int64_t submitted_ = 0;                    // GUARDED_BY(mutex_)
  int64_t finished_ = 0;                     // GUARDED_BY(mutex_)
  std::thread thread_;
};

BackendContext Context(int rank, int size) {
  BackendContext context;
  context.rank = rank;
  context.size = size;
  context.local_rank = rank;
  context.local_size = size;
  context.host_address = "127.0.0.1";
  return context;
}

void CheckErrors(Backend& backend, Failures& failures, int size) {
  // Each rank fails locally before any communication, so no rank waits for another.
  const size_t too_many = size_t{std::numeric_limits<int>::max()} + 1;
  char unused[8] = {};
  // (An allreduce has no such limit: it goes in segments.)
  failures.ExpectError(backend.Broadcast(unused, too_many, DataType::kInt64, 0), "broadcast of 2^31 elements",
                       {"mpi: broadcast of 2147483648 elements"});
  failures.ExpectError(backend.Allgather(unused, unused, too_many, DataType::kInt32),
                       "allgather of 2^31 elements", {"mpi: allgather of 2147483648 elements"});
  // MPI checks the root itself; with MPI_ERRORS_RETURN its code becomes the Status.
  failures.ExpectError(backend.Broadcast(unused, 1, DataType::kInt32, size),
                       "broadcast from a root past the last", {"mpi: broadcast failed: MPI_ERR_ROOT"});
}

// An allreduce larger than the backend's 4 MiB segment, in place and out of place, summed and
// averaged: every segment, the last one short, is reduced and divided.
void CheckSegmentedAllreduce(Backend& backend, Failures& failures, int rank, int size) {
  const size_t count = (size_t{4} << 20) / sizeof(float) * 2 + 3;
  const double ranks_sum = size * (size + 1) / 2.0;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage}) {
    for (bool in_place : {true, false}) {
      std::vector<float> send(count);
      for (size_t i = 0; i < count; ++i) {
        send[i] = static_cast<float>((rank + 1) * static_cast<int>(i % 7 + 1));
      }
      std::vector<float> recv = in_place ? send : std::vector<float>(count, -1.0F);
      float* in = in_place ? recv.data() : send.data();
      const std::string call = std::string("segmented allreduce (") + std::string(ReduceOpName(op)) +
                               (in_place ? ", in place)" : ", out of place)");
      Require(failures, backend.Allreduce(in, recv.data(), count, DataType::kFloat32, op), call);
      size_t wrong = 0;
      for (size_t i = 0; i < count; ++i) {
        const double sum = static_cast<double>(i % 7 + 1) * ranks_sum;
        const double expected = op == ReduceOp::kAverage ? sum / size : sum;
        if (std::abs(recv[i] - expected) > 1e-5 * expected) ++wrong;
      }
      failures.Expect(wrong == 0, call + ": " + std::to_string(wrong) + " wrong elements");
    }
  }
}

// Seconds per call of raw MPI_Allreduce and of backend.Allreduce (float32 sum, in place), timed in
// interleaved rounds so that load on the machine slows both alike.
void TimeAllreduce(Backend& backend, const Failures& failures, int rank, int size) {
  constexpr size_t kSizes[] = {size_t{1} << 20, size_t{16} << 20, size_t{64} << 20};
  constexpr int kWarmup = 3;
  constexpr int kRounds = 5;
  constexpr int kCallsPerRound = 4;
  if (rank == 0) {
    std::printf(
        "# raw MPI_Allreduce vs MpiBackend::Allreduce: float32 sum in place, %d ranks, %d calls each\n", size,
        kRounds * kCallsPerRound);
    std::printf("%12s %14s %14s %12s %12s %8s\n", "bytes", "raw_time_us", "backend_us", "raw_busbw", "busbw",
                "ratio");
  }
  for (size_t bytes : kSizes) {
    const size_t count = bytes / sizeof(float);
    std::vector<float> raw(count, 1.0F);
    std::vector<float> ours(count, 1.0F);
    auto raw_call = [&] {
      if (MPI_Allreduce(MPI_IN_PLACE, raw.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                        MPI_COMM_WORLD) != MPI_SUCCESS) {
        Fatal(failures, "raw MPI_Allreduce failed");
      }
    };
    auto our_call = [&] {
      Require(failures,
              backend.Allreduce(ours.data(), ours.data(), count, DataType::kFloat32, ReduceOp::kSum),
              "timed allreduce");
    };
    for (int i = 0; i < kWarmup; ++i) {
      raw_call();
      our_call();
    }
    const std::function<void()> calls_in_turn[] = {raw_call, our_call};
    double seconds[2] = {0, 0};
    for (int round = 0; round < kRounds; ++round) {
      for (int which = 0; which < 2; ++which) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        for (int i = 0; i < kCallsPerRound; ++i) calls_in_turn[which]();
        seconds[which] += MPI_Wtime() - start;
      }
    }
    const double calls = kRounds * kCallsPerRound;
    const double raw_us = seconds[0] / calls * 1e6;
    const double our_us = seconds[1] / calls * 1e6;
    // busbw as nccl-tests defines it for allreduce: bytes / time * 2 (n - 1) / n.
    const double factor = size > 1 ? 2.0 * (size - 1) / size : 1.0;
    const double raw_busbw = static_cast<double>(bytes) / (raw_us * 1e-6) / 1e9 * factor;
    const double our_busbw = static_cast<double>(bytes) / (our_us * 1e-6) / 1e9 * factor;
    if (rank == 0) {
      std::printf("%12zu %14.1f %14.1f %12.3f %12.3f %8.2f\n", bytes, raw_us, our_us, raw_busbw, our_busbw,
                  our_busbw / raw_busbw);
    }
  }
  std::fflush(stdout);
}

int WorldRank() {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int WorldSize() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

int Finish(const Failures& failures, int size) {
  if (failures.count() > 0) {
    std::fprintf(stderr, "hvdrun_mpi_backend_check: rank %d: %d checks failed\n", failures.rank(),
                 failures.count());
    return 1;
  }
  std::printf("hvdrun_mpi_backend_check: rank %d of %d: every check passed\n", failures.rank(), size);
  return 0;
}

// libhvdrun initialises MPI (on the owner thread), every collective is checked, and destroying
// the backend finalises MPI (on the owner thread again).
int RunChecks(bool time) {
  Failures failures;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0) Fatal(failures, "MPI is already initialised before any backend was created");

  OwnerThread owner;
  std::unique_ptr<Backend> backend;
  int rank = -1;
  int size = 0;
  owner.Run([&] {
    // No hvdrun job has 1000 ranks here: the mismatch is certain, and it initialises MPI.
    StatusOr<std::unique_ptr<Backend>> mismatched = CreateBackend(BackendKind::kMpi, Context(0, 1000));
    rank = WorldRank();
    size = WorldSize();
    failures.SetRank(rank);
    failures.ExpectError(mismatched.ok() ? Status::Ok() : mismatched.status(), "Create with size 1000",
                         {"mpi: this process is rank " + std::to_string(rank) + " of " +
                              std::to_string(size) + " in MPI_COMM_WORLD, but hvdrun gave it rank 0 of 1000",
                          "hvdrun --mpi"});
    int main_thread = 0;
    MPI_Is_thread_main(&main_thread);
    failures.Expect(main_thread != 0, "MPI was not initialised on the thread that created the backend");
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    failures.Expect(level >= MPI_THREAD_SERIALIZED, "MPI runs below MPI_THREAD_SERIALIZED");

    StatusOr<std::unique_ptr<Backend>> created = CreateBackend(BackendKind::kMpi, Context(rank, size));
    Require(failures, created.ok() ? Status::Ok() : created.status(), "Create");
    backend = std::move(created).value();
  });

  // The cases, each on a thread of its own, none the creator's: one call at a time from any thread
  // (MPI_THREAD_SERIALIZED).
  testing::ConformanceRank conformance;
  conformance.backend = backend.get();
  conformance.kind = BackendKind::kMpi;
  conformance.rank = rank;
  conformance.size = size;
  conformance.report = &failures;
  for (const testing::ConformanceCase& conformance_case : testing::ConformanceCases()) {
    std::thread([&] { conformance_case.run(conformance); }).join();
  }
  CheckErrors(*backend, failures, size);
  CheckSegmentedAllreduce(*backend, failures, rank, size);
  if (time) TimeAllreduce(*backend, failures, rank, size);

  owner.Run([&] {
    backend.reset();
    int finalized = 0;
    MPI_Finalized(&finalized);
    failures.Expect(finalized != 0,
                    "destroying the last backend did not finalise MPI, which libhvdrun initialised");
    StatusOr<std::unique_ptr<Backend>> again = CreateBackend(BackendKind::kMpi, Context(rank, size));
    failures.ExpectError(again.ok() ? Status::Ok() : again.status(), "Create after MPI_Finalize",
                         {"mpi: MPI was already finalised in this process"});
  });
  return Finish(failures, size);
}

// The program initialises MPI itself at `level`.
int RunProgramInit(const std::string& level_name) {
  Failures failures;
  const int requested = level_name == "serialized" ? MPI_THREAD_SERIALIZED : MPI_THREAD_FUNNELED;
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(nullptr, nullptr, requested, &provided) != MPI_SUCCESS) {
    Fatal(failures, "MPI_Init_thread failed");
  }
  const int rank = WorldRank();
  const int size = WorldSize();
  failures.SetRank(rank);
  StatusOr<std::unique_ptr<Backend>> created = CreateBackend(BackendKind::kMpi, Context(rank, size));
  if (requested == MPI_THREAD_FUNNELED) {
    failures.Expect(
        provided < MPI_THREAD_SERIALIZED,
        "MPI_Init_thread(MPI_THREAD_FUNNELED) provided a higher level; the check needs a lower one");
    failures.ExpectError(
        created.ok() ? Status::Ok() : created.status(), "Create under MPI_THREAD_FUNNELED",
        {"mpi: the program initialised MPI at MPI_THREAD_FUNNELED", "needs MPI_THREAD_SERIALIZED or better"});
  } else {
    Require(failures, created.ok() ? Status::Ok() : created.status(), "Create");
    std::vector<double> values(7, rank + 1.0);
    Require(failures,
            created.value()->Allreduce(values.data(), values.data(), 7, DataType::kFloat64, ReduceOp::kSum),
            "allreduce");
    failures.Expect(values == std::vector<double>(7, size * (size + 1) / 2.0), "allreduce sum is wrong");
    created.value().reset();
    int finalized = 0;
    MPI_Finalized(&finalized);
    failures.Expect(finalized == 0, "destroying the backend finalised MPI, which the program initialised");
    failures.Expect(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "MPI_Barrier failed after the backend ended");
  }
  MPI_Finalize();
  return Finish(failures, size);
}

}  // namespace
}  // namespace hvdrun

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return hvdrun::RunChecks(false);
  if (args.size() == 1 && args[0] == "--time") return hvdrun::RunChecks(true);
  if (args.size() == 2 && args[0] == "--program-init" && (args[1] == "serialized" || args[1] == "funneled")) {
    return hvdrun::RunProgramInit(args[1]);
  }
  std::fprintf(stderr,
               "usage: hvdrun_mpi_backend_check [--time | --program-init serialized|funneled] "
               "(run under mpirun)\n");
  return 2;
}
