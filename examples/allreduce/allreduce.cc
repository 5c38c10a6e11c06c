// allreduce: a program of your own on libhvdrun, as small as one can be. Every rank joins the job
// from the environment hvdrun gives it, sums a vector over all ranks, and prints the result.
//
// Build it against an installed hvdrun, as any program of yours: with CMake (this directory's
// CMakeLists.txt: find_package(hvdrun) and hvdrun::hvdrun), with pkg-config, or by hand. From the
// Debian packages (libhvdrun-dev) everything is in /usr:
//
//   cmake -S . -B build && cmake --build build
//   c++ -std=c++17 allreduce.cc $(pkg-config --cflags --libs hvdrun) -o allreduce
//
// Installed elsewhere with `cmake --install` (PREFIX, /usr/local by default), tell CMake and
// pkg-config where (the rpath lets the program find libhvdrun there at run time):
//
//   cmake -S . -B build -DCMAKE_PREFIX_PATH=$PREFIX && cmake --build build
//   export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
//   c++ -std=c++17 allreduce.cc $(pkg-config --cflags --libs hvdrun) -Wl,-rpath,$PREFIX/lib -o allreduce
//
// Run it under hvdrun, which starts the ranks and the rendezvous service Gloo bootstraps through:
//
//   hvdrun -np 2 --gloo ./allreduce
//   [0]<stdout>:rank 0 of 2: sum over ranks of (rank + 1) * (1 2 3 4) = 3 6 9 12
//   [1]<stdout>:rank 1 of 2: sum over ranks of (rank + 1) * (1 2 3 4) = 3 6 9 12
//
// Run without hvdrun, or when a collective fails, it prints libhvdrun's one-line reason
// ("allreduce: HVDRUN_RANK is not set: run this program under hvdrun") and exits with status 1.
#include <hvdrun/runtime.h>

#include <cstdio>
#include <memory>
#include <vector>

int main() {
  hvdrun::StatusOr<std::unique_ptr<hvdrun::Runtime>> runtime = hvdrun::Runtime::InitFromEnvironment();
  if (!runtime.ok()) {
    std::fprintf(stderr, "allreduce: %s\n", runtime.status().message().c_str());
    return 1;
  }
  hvdrun::Runtime& job = *runtime.value();

  // Each rank contributes (rank + 1) * (1 2 3 4); the sum over N ranks is N(N+1)/2 * (1 2 3 4).
  std::vector<double> values = {1, 2, 3, 4};
  for (double& value : values) value *= job.rank() + 1;
  hvdrun::Status status = job.Allreduce(values.data(), values.data(), values.size(),
                                        hvdrun::DataType::kFloat64, hvdrun::ReduceOp::kSum);
  if (!status.ok()) {
    std::fprintf(stderr, "allreduce: rank %d: %s\n", job.rank(), status.message().c_str());
    return 1;
  }

  std::printf("rank %d of %d: sum over ranks of (rank + 1) * (1 2 3 4) =", job.rank(), job.size());
  for (double value : values) std::printf(" %g", value);
  std::printf("\n");
  return 0;
}
