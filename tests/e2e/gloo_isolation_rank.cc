// hvdrun-test-gloo-isolation: a rank program in a process where another Gloo comes first. It is
// linked with libhvdrun-test-conflicting-gloo.so before libhvdrun (and the test preloads that
// library too): the process's global scope finds that library's gloo:: functions, which abort,
// before any other. Through libhvdrun's public API alone, it then runs a collective of every kind
// over --gloo, each reaching gloo:: functions that library defines, and checks every result
// exactly. It exits 0 only if all are right, printing
//   rank R of N: gloo isolated from 12 conflicting gloo:: functions: 7 collectives exact
// and 2 when the other Gloo is not first in the process (the test would then prove nothing).
#include <dlfcn.h>
#include <hvdrun/runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

extern "C" int hvdrun_test_conflicting_gloo_functions();

namespace {

// gloo::allreduce(gloo::AllreduceOptions const&)
constexpr char kAllreduceSymbol[] = "_ZN4gloo9allreduceERKNS_16AllreduceOptionsE";

// The file that defines the process's first gloo::allreduce; empty if none does.
std::string FirstGlooAllreduceFile() {
  void* symbol = dlsym(RTLD_DEFAULT, kAllreduceSymbol);
  Dl_info info{};
  if (symbol == nullptr || dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

int failures = 0;

void Check(bool ok, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "gloo isolation: wrong result: %s\n", what.c_str());
}

bool Succeeded(const hvdrun::Status& status, const char* call) {
  if (status.ok()) return true;
  std::fprintf(stderr, "gloo isolation: %s: %s\n", call, status.message().c_str());
  return false;
}

}  // namespace

int main() {
  const int conflicting = hvdrun_test_conflicting_gloo_functions();
  const std::string first = FirstGlooAllreduceFile();
  if (first.find("libhvdrun-test-conflicting-gloo") == std::string::npos) {
    std::fprintf(stderr,
                 "gloo isolation: the process's first gloo::allreduce is in '%s', not in the conflicting "
                 "library: link it first or preload it\n",
                 first.c_str());
    return 2;
  }

  hvdrun::StatusOr<std::unique_ptr<hvdrun::Runtime>> runtime = hvdrun::Runtime::InitFromEnvironment();
  if (!runtime.ok()) {
    std::fprintf(stderr, "gloo isolation: %s\n", runtime.status().message().c_str());
    return 1;
  }
  hvdrun::Runtime& job = *runtime.value();
  const int rank = job.rank();
  const int size = job.size();
  // The sum over ranks of (rank + 1).
  const double sum_of_ranks_plus_one = static_cast<double>(size) * (size + 1) / 2;

  // Small: through libhvdrun's own exchange over gloo's pairs and unbound buffers.
  std::vector<double> small = {1, 2, 3, 4};
  for (double& value : small) value *= rank + 1;
  if (!Succeeded(job.Allreduce(small.data(), small.data(), small.size(), hvdrun::DataType::kFloat64,
                               hvdrun::ReduceOp::kSum),
                 "small allreduce")) {
    return 1;
  }
  for (size_t i = 0; i < small.size(); ++i) {
    Check(small[i] == sum_of_ranks_plus_one * static_cast<double>(i + 1), "small allreduce");
  }

  // Large (1 MiB, past the exchange's 8 KiB): through gloo::allreduce.
  std::vector<float> large(size_t{1} << 18);
  for (size_t i = 0; i < large.size(); ++i) large[i] = static_cast<float>((i % 1000) * (rank + 1));
  if (!Succeeded(job.Allreduce(large.data(), large.data(), large.size(), hvdrun::DataType::kFloat32,
                               hvdrun::ReduceOp::kSum),
                 "large allreduce")) {
    return 1;
  }
  bool large_exact = true;
  for (size_t i = 0; i < large.size(); ++i) {
    large_exact =
        large_exact && large[i] == static_cast<float>(static_cast<double>(i % 1000) * sum_of_ranks_plus_one);
  }
  Check(large_exact, "large allreduce");

  // The library's own in-place allreduce: gloo::allreduce with gloo::sum.
  std::vector<double> baseline(4096, static_cast<double>(rank + 1));
  if (!Succeeded(job.BaselineAllreduce(baseline.data(), baseline.size(), hvdrun::DataType::kFloat64,
                                       hvdrun::ReduceOp::kSum),
                 "baseline allreduce")) {
    return 1;
  }
  for (double value : baseline) Check(value == sum_of_ranks_plus_one, "baseline allreduce");

  const int root = size - 1;
  std::vector<int64_t> broadcast(100000, rank == root ? int64_t{0x0123456789} : int64_t{-1});
  if (!Succeeded(job.Broadcast(broadcast.data(), broadcast.size(), hvdrun::DataType::kInt64, root),
                 "broadcast")) {
    return 1;
  }
  for (int64_t value : broadcast) Check(value == 0x0123456789, "broadcast");

  std::vector<int32_t> mine(3, rank * 10);
  std::vector<int32_t> gathered(mine.size() * static_cast<size_t>(size), -1);
  if (!Succeeded(job.Allgather(mine.data(), gathered.data(), mine.size(), hvdrun::DataType::kInt32),
                 "allgather")) {
    return 1;
  }
  for (size_t i = 0; i < gathered.size(); ++i) {
    Check(gathered[i] == static_cast<int32_t>(i / mine.size()) * 10, "allgather");
  }

  std::vector<double> average(8, static_cast<double>(2 * (rank + 1)));
  if (!Succeeded(job.Allreduce(average.data(), average.data(), average.size(), hvdrun::DataType::kFloat64,
                               hvdrun::ReduceOp::kAverage),
                 "average")) {
    return 1;
  }
  for (double value : average) Check(value == static_cast<double>(size + 1), "average");

  if (!Succeeded(job.Barrier(), "barrier")) return 1;

  if (failures > 0) return 1;
  std::printf("rank %d of %d: gloo isolated from %d conflicting gloo:: functions: 7 collectives exact\n",
              rank, size, conflicting);
  return 0;
}
