// hvdrun-test-collectives: a rank program for end-to-end tests of libhvdrun under `hvdrun --gloo`,
// the whole-Runtime harness of the backend conformance cases (runtime/backend_conformance.h). It
// initialises from its environment, runs every case through its Runtime, sends a report, and exits
// 0 only if every check passed. Output: one "checked N results, F failed" line, and one line per
// failed check (the first 20).
//
// The backends' own harnesses run what this one leaves out: the baseline case, which has the
// backend refuse a call (a refused call leaves a Runtime broken: hvdrun/runtime.h), the alltoall
// case (an alltoall is the backends' own, for compression, and no Runtime call), and the counts
// above 100,003 elements (a large call's data path is the backend's; up to four ranks as processes
// on the shared test machine would take most of the test's time limit on them).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "hvdrun/runtime.h"
#include "runtime/backend.h"
#include "runtime/backend_conformance.h"

namespace hvdrun {
namespace {

// The Runtime's collectives, which have the Backend's signatures, as a Backend.
class RuntimeAsBackend : public Backend {
 public:
  explicit RuntimeAsBackend(Runtime& runtime) : runtime_(runtime) {}
  Status Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) override {
    return runtime_.Allreduce(send, recv, count, type, op);
  }
  Status Broadcast(void* buffer, size_t count, DataType type, int root) override {
    return runtime_.Broadcast(buffer, count, type, root);
  }
  Status Allgather(const void* send, void* recv, size_t count, DataType type) override {
    return runtime_.Allgather(send, recv, count, type);
  }
  Status Alltoall(const void* /*send*/, void* /*recv*/, size_t /*count*/, DataType /*type*/) override {
    return Status::Error("a Runtime has no alltoall");
  }
  Status Barrier() override { return runtime_.Barrier(); }
  Status BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) override {
    return runtime_.BaselineAllreduce(buffer, count, type, op);
  }

 private:
  Runtime& runtime_;
};

// Counts the checks and prints the first failures.
class CountingReport : public testing::ConformanceReport {
 public:
  explicit CountingReport(int rank) : rank_(rank) {}
  void Check(bool ok, const std::string& what) override {
    ++checked_;
    if (!ok && failures_++ < kPrinted) std::printf("rank %d: MISMATCH %s\n", rank_, what.c_str());
  }
  void CollectiveFailed(const std::string& call, const Status& status) override {
    Check(false, call + " failed: " + status.message());
  }
  int failures() const { return failures_; }
  int64_t checked() const { return checked_; }

 private:
  static constexpr int kPrinted = 20;
  int rank_;
  int failures_ = 0;
  int64_t checked_ = 0;
};

int Run() {
  StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::InitFromEnvironment();
  if (!runtime.ok()) {
    std::fprintf(stderr, "%s\n", runtime.status().message().c_str());
    return 1;
  }
  Runtime& rt = *runtime.value();
  RuntimeAsBackend backend(rt);
  CountingReport report(rt.rank());
  testing::ConformanceRank rank;
  rank.backend = &backend;
  rank.kind = rt.backend();
  rank.rank = rt.rank();
  rank.size = rt.size();
  rank.report = &report;
  rank.max_count = 100'003;
  for (const testing::ConformanceCase& conformance_case : testing::ConformanceCases()) {
    if (std::strcmp(conformance_case.name, "BaselineIsTheLibrarysSum") == 0 ||
        std::strcmp(conformance_case.name, "AlltoallEveryTypeAndCount") == 0 ||
        std::strcmp(conformance_case.name, "AlltoallvUnevenCounts") == 0) {
      continue;
    }
    conformance_case.run(rank);
  }
  std::string summary = "{\"summary\": {\"checked\": " + std::to_string(report.checked()) +
                        ", \"failures\": " + std::to_string(report.failures()) + "}}";
  if (Status status = rt.SendReport(summary); !status.ok()) {
    std::fprintf(stderr, "report: %s\n", status.message().c_str());
    return 1;
  }
  std::printf("rank %d of %d: checked %lld results, %d failed\n", rt.rank(), rt.size(),
              static_cast<long long>(report.checked()), report.failures());
  return report.failures() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace hvdrun

int main() { return hvdrun::Run(); }
