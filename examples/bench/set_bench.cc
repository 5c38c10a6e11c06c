// set_bench: libhvdrun's reducescatter against Open MPI's MPI_Reduce_scatter_block of the same bytes,
// and an allreduce in a process set of every rank against the same ranks' whole-job allreduce, timed in
// alternating rounds in one run (docs/benchmarks.md records its figures). Not installed: run it from
// the build tree under hvdrun --mpi, which it needs for the MPI baseline:
//
//   hvdrun -np 2 --mpi build/examples/bench/set_bench --mib 64 --rounds 7 --iters 5
//
// Prints, on rank 0, one line per measure: the median over rounds of the per-call time and the bus
// bandwidth (nccl-tests' convention: bytes / time x (n - 1) / n for both), and the ratios: of those
// medians, and the median of each round's ratio (calls of one round ran side by side in time, so
// this one is the steadier on a loaded machine).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hvdrun/runtime.h"

namespace {

struct Flags {
  size_t mib = 64;
  int rounds = 7;
  int iters = 5;
};

bool ParseFlags(int argc, char** argv, Flags* flags) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int64_t value = std::strtoll(argv[i + 1], nullptr, 10);
    if (value <= 0) return false;
    if (flag == "--mib") {
      flags->mib = static_cast<size_t>(value);
    } else if (flag == "--rounds") {
      flags->rounds = static_cast<int>(value);
    } else if (flag == "--iters") {
      flags->iters = static_cast<int>(value);
    } else {
      return false;
    }
  }
  return argc % 2 == 1;
}

// Seconds per call of `iters` calls of `call`, between barriers; rank 0's clock.
double Time(int iters, const std::function<bool()>& call) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    if (!call()) return -1;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iters;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void Report(const char* what, const std::vector<double>& times, double bytes, int size) {
  const double seconds = Median(times);
  std::printf("%-34s %9.3f ms  busbw %7.2f GB/s\n", what, seconds * 1e3,
              bytes / seconds * (size - 1) / size / 1e9);
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) {
    std::fprintf(stderr, "usage: set_bench [--mib N] [--rounds N] [--iters N]\n");
    return 2;
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int exit_code = 0;
  {
    auto runtime = hvdrun::Runtime::InitFromEnvironment(nullptr, hvdrun::CollectiveOrder::kNegotiated);
    if (!runtime.ok()) {
      std::fprintf(stderr, "set_bench: %s\n", runtime.status().message().c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    hvdrun::Runtime& hvd = *runtime.value();
    const int size = hvd.size();
    std::vector<int> everyone(static_cast<size_t>(size));
    for (int rank = 0; rank < size; ++rank) everyone[static_cast<size_t>(rank)] = rank;
    const hvdrun::StatusOr<int> set = hvd.AddProcessSet(everyone);
    if (!set.ok()) {
      std::fprintf(stderr, "set_bench: %s\n", set.status().message().c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t count = (flags.mib << 20) / sizeof(float);
    count -= count % static_cast<size_t>(size);
    const size_t part = count / static_cast<size_t>(size);
    std::vector<float> send(count, static_cast<float>(hvd.rank() + 1));
    std::vector<float> recv(part);
    std::vector<float> whole(count, 1.0F);
    const auto f32 = hvdrun::DataType::kFloat32;
    const auto sum = hvdrun::ReduceOp::kSum;
    std::vector<double> ours, mpi, in_set, in_job;
    std::vector<double> rs_ratios, set_ratios;  // per round: baseline time / ours
    for (int round = 0; round < flags.rounds; ++round) {
      ours.push_back(Time(flags.iters, [&] {
        return hvd.Reducescatter("rs", send.data(), recv.data(), count, f32, sum, 1).ok();
      }));
      mpi.push_back(Time(flags.iters, [&] {
        return MPI_Reduce_scatter_block(send.data(), recv.data(), static_cast<int>(part), MPI_FLOAT, MPI_SUM,
                                        MPI_COMM_WORLD) == MPI_SUCCESS;
      }));
      // The set's and the job's allreduce take turns going first, so that neither always follows
      // the same call; each round's ratio compares two neighbours in time.
      const auto time_set = [&] {
        in_set.push_back(Time(flags.iters, [&] {
          return hvd.Allreduce("set.ar", whole.data(), whole.data(), count, f32, sum, set.value()).ok();
        }));
      };
      const auto time_job = [&] {
        in_job.push_back(Time(flags.iters, [&] {
          return hvd.Allreduce("job.ar", whole.data(), whole.data(), count, f32, sum).ok();
        }));
      };
      if (round % 2 == 0) {
        time_set();
        time_job();
      } else {
        time_job();
        time_set();
      }
      set_ratios.push_back(in_job.back() / in_set.back());
      rs_ratios.push_back(mpi.back() / ours.back());
    }
    const bool failed = std::find(ours.begin(), ours.end(), -1.0) != ours.end() ||
                        std::find(in_set.begin(), in_set.end(), -1.0) != in_set.end() ||
                        std::find(in_job.begin(), in_job.end(), -1.0) != in_job.end();
    const float expected = static_cast<float>(size) * static_cast<float>(size + 1) / 2.0F;
    if (failed || recv.front() != expected || recv.back() != expected) {
      std::fprintf(stderr, "set_bench: rank %d: a collective failed or reduced wrongly (%g, expected %g)\n",
                   hvd.rank(), static_cast<double>(recv.front()), static_cast<double>(expected));
      exit_code = 1;
    }
    if (hvd.rank() == 0) {
      const double bytes = static_cast<double>(count * sizeof(float));
      std::printf("%d ranks, %zu MiB float32, %d rounds of %d calls, libhvdrun's allreduce path: %s\n", size,
                  flags.mib, flags.rounds, flags.iters, hvd.allreduce_path().c_str());
      Report("reducescatter (libhvdrun)", ours, bytes, size);
      Report("MPI_Reduce_scatter_block", mpi, bytes, size);
      Report("allreduce in a set of every rank", in_set, bytes, size);
      Report("allreduce over the whole job", in_job, bytes, size);
      std::printf("reducescatter busbw ratio (libhvdrun / MPI): %.3f; median of the rounds' ratios %.3f\n",
                  Median(mpi) / Median(ours), Median(rs_ratios));
      std::printf("set allreduce busbw ratio (set / whole job): %.3f; median of the rounds' ratios %.3f\n",
                  Median(in_job) / Median(in_set), Median(set_ratios));
    }
  }
  MPI_Finalize();
  return exit_code;
}
