// hvdrun_mpi_backend_check: checks MpiBackend with one process per rank under mpirun (MPI cannot
// run ranks as threads, so this is a program rather than a gtest). Registered with CTest for 1..4
// ranks (runtime/CMakeLists.txt, label integration).
//
//   mpirun -np N hvdrun_mpi_backend_check [--time]
//     Allreduce of every data type x reduce op x element counts 0, 1, 7 and 1,000,003, in place and
//     out of place, against the float64 reference of runtime/collective_test_values.h; broadcast
//     from every root; allgather out of place, in place and from inside the receive buffer;
//     barrier; the baseline; errors (rank/size mismatch, MPI error codes, counts past MPI's int);
//     and MPI's lifetime: libhvdrun initialises MPI on the thread that creates the backend and
//     finalises it on the thread that destroys it. --time also times the raw MPI_Allreduce against
//     MpiBackend::Allreduce (float32 sum, in place) at 1, 16 and 64 MiB and prints them on rank 0.
//   mpirun -np N hvdrun_mpi_backend_check --program-init serialized|funneled
//     The program initialises MPI itself: at MPI_THREAD_SERIALIZED the backend works and leaves MPI
//     initialised; at MPI_THREAD_FUNNELED creating the backend is a clear error.
//
// Every failed check prints one line (at most 20 per rank) and the rank exits 1 at the end; a
// collective that returns an error ends the job at once (MPI_Abort), since the other ranks could
// otherwise wait for this one forever.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
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
#include "runtime/collective_test_values.h"

namespace hvdrun {
namespace {

using testing::InputValue;
using testing::LoadElement;
using testing::Reference;
using testing::StoreElement;

constexpr DataType kAllTypes[] = {DataType::kFloat32,  DataType::kFloat64, DataType::kFloat16,
                                  DataType::kBFloat16, DataType::kInt32,   DataType::kInt64};
constexpr ReduceOp kAllOps[] = {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMin, ReduceOp::kMax};
constexpr size_t kAllreduceCounts[] = {0, 1, 7, 1'000'003};
constexpr size_t kBroadcastCounts[] = {0, 1, 7, 100'003};
constexpr size_t kAllgatherCounts[] = {0, 1, 7, 50'001};
constexpr int kMaxReported = 20;

// This rank's failed checks: counted, the first kMaxReported printed.
class Failures {
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

std::string Describe(DataType type, ReduceOp op, size_t count, const char* placement) {
  return std::string(DataTypeName(type)) + " " + std::string(ReduceOpName(op)) + " count " +
         std::to_string(count) + " " + placement;
}

void CheckAllreduceCase(Backend& backend, Failures& failures, int rank, int size, DataType type, ReduceOp op,
                        size_t count, bool in_place) {
  const size_t bytes = count * DataTypeSize(type);
  std::vector<char> send(bytes);
  std::vector<char> recv(bytes, 0x55);
  for (size_t i = 0; i < count; ++i) StoreElement(type, send.data(), i, InputValue(type, rank, i));
  const std::vector<char> original = in_place ? std::vector<char>() : send;
  void* output = in_place ? send.data() : recv.data();
  const char* placement = in_place ? "in place" : "out of place";
  Require(failures, backend.Allreduce(send.data(), output, count, type, op),
          "allreduce " + Describe(type, op, count, placement));

  const double bound = 2 * testing::UnitRoundoff(type);
  const bool exact = op != ReduceOp::kAverage || bound == 0;
  int wrong = 0;
  for (size_t i = 0; i < count && wrong < 3; ++i) {
    const double expected = Reference(type, op, size, i);
    const double got = LoadElement(type, output, i);
    const bool good = exact ? got == expected : std::abs(got - expected) <= bound * std::abs(expected);
    if (!good) {
      ++wrong;
      failures.Add("allreduce " + Describe(type, op, count, placement) + ": element " + std::to_string(i) +
                   " is " + std::to_string(got) + ", expected " + std::to_string(expected));
    }
  }
  if (!in_place) {
    failures.Expect(send == original,
                    "allreduce " + Describe(type, op, count, placement) + " changed its input");
  }
}

void CheckAllreduce(Backend& backend, Failures& failures, int rank, int size) {
  for (DataType type : kAllTypes) {
    for (ReduceOp op : kAllOps) {
      for (size_t count : kAllreduceCounts) {
        for (bool in_place : {true, false}) {
          CheckAllreduceCase(backend, failures, rank, size, type, op, count, in_place);
        }
      }
    }
  }
  // Averages of integers truncate toward zero, as in the Gloo backend: with two ranks, sums -7, 7,
  // -1, 1 average to -3, 3, 0, 0.
  if (size == 2) {
    std::vector<int32_t> values =
        rank == 0 ? std::vector<int32_t>{-4, 4, -1, 1} : std::vector<int32_t>{-3, 3, 0, 0};
    Require(failures,
            backend.Allreduce(values.data(), values.data(), 4, DataType::kInt32, ReduceOp::kAverage),
            "allreduce int32 average");
    failures.Expect(values == std::vector<int32_t>{-3, 3, 0, 0},
                    "int32 average of -7, 7, -1, 1 over 2 ranks is not -3, 3, 0, 0");
  }
}

void CheckBroadcast(Backend& backend, Failures& failures, int rank, int size) {
  for (int root = 0; root < size; ++root) {
    for (DataType type : kAllTypes) {
      for (size_t count : kBroadcastCounts) {
        std::vector<char> buffer(count * DataTypeSize(type));
        for (size_t i = 0; i < count; ++i) StoreElement(type, buffer.data(), i, InputValue(type, rank, i));
        const std::string what = "broadcast " + std::string(DataTypeName(type)) + " count " +
                                 std::to_string(count) + " root " + std::to_string(root);
        Require(failures, backend.Broadcast(buffer.data(), count, type, root), what);
        std::vector<char> expected(buffer.size());
        for (size_t i = 0; i < count; ++i) StoreElement(type, expected.data(), i, InputValue(type, root, i));
        failures.Expect(buffer == expected, what + ": the buffer differs from the root's");
      }
    }
  }
}

enum class GatherPlacement { kSeparate, kOwnBlock, kStartOfReceive };

void CheckAllgather(Backend& backend, Failures& failures, int rank, int size) {
  for (DataType type : kAllTypes) {
    for (size_t count : kAllgatherCounts) {
      for (GatherPlacement placement :
           {GatherPlacement::kSeparate, GatherPlacement::kOwnBlock, GatherPlacement::kStartOfReceive}) {
        const size_t bytes = count * DataTypeSize(type);
        std::vector<char> recv(bytes * static_cast<size_t>(size), 0x55);
        std::vector<char> separate(bytes);
        char* send = separate.data();
        const char* where = "from a separate buffer";
        if (placement == GatherPlacement::kOwnBlock) {
          send = recv.data() + static_cast<size_t>(rank) * bytes;
          where = "in place";
        } else if (placement == GatherPlacement::kStartOfReceive) {
          send = recv.data();
          where = "from the start of the receive buffer";
        }
        for (size_t i = 0; i < count; ++i) StoreElement(type, send, i, InputValue(type, rank, i));
        const std::string what =
            "allgather " + std::string(DataTypeName(type)) + " count " + std::to_string(count) + " " + where;
        Require(failures, backend.Allgather(send, recv.data(), count, type), what);
        std::vector<char> expected(recv.size());
        for (int block = 0; block < size; ++block) {
          for (size_t i = 0; i < count; ++i) {
            StoreElement(type, expected.data(), static_cast<size_t>(block) * count + i,
                         InputValue(type, block, i));
          }
        }
        failures.Expect(recv == expected, what + ": the gathered blocks differ from the ranks' inputs");
      }
    }
  }
}

// The last rank creates a file only after a pause and then enters the barrier; every rank must see
// the file once its barrier returns. The directory is rank 0's, named to the others by broadcast.
void CheckBarrier(Backend& backend, Failures& failures, int rank, int size) {
  constexpr size_t kPathBytes = 256;
  std::vector<char> directory(kPathBytes, '\0');
  if (rank == 0) {
    std::string pattern = (std::filesystem::temp_directory_path() / "hvdrun-mpi-barrier-XXXXXX").string();
    if (pattern.size() >= kPathBytes || mkdtemp(pattern.data()) == nullptr) {
      Fatal(failures, "cannot create a directory from " + pattern + ": " + std::strerror(errno));
    }
    std::copy(pattern.begin(), pattern.end(), directory.begin());
  }
  Require(failures, backend.Broadcast(directory.data(), kPathBytes / 4, DataType::kInt32, 0),
          "broadcast of the barrier directory");
  const std::filesystem::path path(directory.data());
  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    const std::filesystem::path marker = path / ("round-" + std::to_string(round));
    if (rank == size - 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::FILE* file = std::fopen(marker.c_str(), "w");
      if (file == nullptr) Fatal(failures, "cannot create " + marker.string() + ": " + std::strerror(errno));
      std::fclose(file);
    }
    Require(failures, backend.Barrier(), "barrier");
    failures.Expect(std::filesystem::exists(marker), "barrier round " + std::to_string(round) +
                                                         " returned before rank " + std::to_string(size - 1) +
                                                         " entered it");
    Require(failures, backend.Barrier(), "barrier");
  }
  if (rank == 0) std::filesystem::remove_all(path);
}

void CheckBaseline(Backend& backend, Failures& failures, int rank, int size) {
  const float triangle = static_cast<float>(size) * static_cast<float>(size + 1) / 2;
  std::vector<float> floats(1001, static_cast<float>(rank + 1));
  Require(failures,
          backend.BaselineAllreduce(floats.data(), floats.size(), DataType::kFloat32, ReduceOp::kSum),
          "baseline float32");
  failures.Expect(floats == std::vector<float>(1001, triangle), "baseline float32 sum is wrong");
  std::vector<double> doubles(17, 0.5 * rank);
  Require(failures,
          backend.BaselineAllreduce(doubles.data(), doubles.size(), DataType::kFloat64, ReduceOp::kSum),
          "baseline float64");
  failures.Expect(doubles == std::vector<double>(17, 0.25 * size * (size - 1)),
                  "baseline float64 sum is wrong");
  std::vector<char> halves(DataTypeSize(DataType::kFloat16) * 5);
  failures.ExpectError(
      backend.BaselineAllreduce(halves.data(), 5, DataType::kFloat16, ReduceOp::kSum), "baseline float16",
      {"mpi: the baseline allreduce supports float32 and float64 with sum, not float16 with sum"});
  failures.ExpectError(backend.BaselineAllreduce(floats.data(), 5, DataType::kFloat32, ReduceOp::kAverage),
                       "baseline average", {"not float32 with average"});
}

void CheckErrors(Backend& backend, Failures& failures, int size) {
  // Each rank fails locally before any communication, so no rank waits for another.
  const size_t too_many = size_t{std::numeric_limits<int>::max()} + 1;
  char unused[8] = {};
  failures.ExpectError(backend.Allreduce(unused, unused, too_many, DataType::kFloat32, ReduceOp::kSum),
                       "allreduce of 2^31 elements",
                       {"mpi: allreduce of 2147483648 elements exceeds MPI's limit of 2147483647"});
  failures.ExpectError(backend.Broadcast(unused, too_many, DataType::kInt64, 0), "broadcast of 2^31 elements",
                       {"mpi: broadcast of 2147483648 elements"});
  failures.ExpectError(backend.Allgather(unused, unused, too_many, DataType::kInt32),
                       "allgather of 2^31 elements", {"mpi: allgather of 2147483648 elements"});
  // MPI checks the root itself; with MPI_ERRORS_RETURN its code becomes the Status.
  failures.ExpectError(backend.Broadcast(unused, 1, DataType::kInt32, size),
                       "broadcast from a root past the last", {"mpi: broadcast failed: MPI_ERR_ROOT"});
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

  // Calls from threads other than the creator's, one at a time (MPI_THREAD_SERIALIZED).
  CheckAllreduce(*backend, failures, rank, size);
  std::thread([&] {
    CheckBroadcast(*backend, failures, rank, size);
    CheckAllgather(*backend, failures, rank, size);
  }).join();
  CheckBarrier(*backend, failures, rank, size);
  CheckBaseline(*backend, failures, rank, size);
  CheckErrors(*backend, failures, size);
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
