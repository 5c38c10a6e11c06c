// The backend conformance cases: what every Backend's collectives must do (runtime/backend.h),
// written once and run by each backend's own harness, which starts the ranks its own way:
//   gloo   runtime/backends/gloo/gloo_conformance_test.cc   ranks as threads over TCP on 127.0.0.1
//   mpi    runtime/backends/mpi/mpi_backend_check.cc        one process per rank under mpirun
//   nccl   runtime/backends/nccl/nccl_backend_test.cc       ranks as threads, one GPU each; skipped,
//                                                           saying why, on a host without one
// and by tests/e2e/collective_rank.cc through a whole Runtime under `hvdrun --gloo`. A new backend
// gets them by adding a harness.
//
// Each case is a collective: every rank of the job calls it, in the same order, with its own
// ConformanceRank. Results are checked against float64 references: exactly where every type can
// hold them, within the type's rounding for averages. A case reports every check to
// ConformanceRank::report; when a collective returns an error it reports that and returns at once,
// since the other ranks may be waiting in that call. For tests only.
#ifndef HVDRUN_RUNTIME_BACKEND_CONFORMANCE_H_
#define HVDRUN_RUNTIME_BACKEND_CONFORMANCE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "runtime/backend.h"

namespace hvdrun::testing {

// Where a case reports; the harness turns reports into gtest failures, printed lines or counts.
class ConformanceReport {
 public:
  virtual ~ConformanceReport() = default;
  // One check; `what` says what was checked and, when !ok, what was found instead.
  virtual void Check(bool ok, const std::string& what) = 0;
  // `call` returned `status`, an error. The harness may end the job here (MPI: MPI_Abort); if it
  // returns, the case returns too.
  virtual void CollectiveFailed(const std::string& call, const Status& status) = 0;
};

// Memory of the kind the backend takes (host memory; device memory for NCCL), written from and read
// back into host bytes.
class TestBuffer {
 public:
  virtual ~TestBuffer() = default;
  virtual char* data() = 0;
  // `bytes` must have the buffer's size.
  virtual void Upload(const std::vector<char>& bytes) = 0;
  virtual std::vector<char> Download() const = 0;
};

// Host memory: the buffers of the Gloo and MPI backends.
std::unique_ptr<TestBuffer> HostBuffer(size_t bytes);

// How a backend computes an average of floating-point values, which bounds its rounding error.
enum class AverageRounding {
  kSumThenDivide,  // the sum, divided once: within 2 unit roundoffs of the reference
  kScaleThenSum,   // each input scaled by 1/size, then summed (NCCL's ncclAvg): within
                   // (size + 2) unit roundoffs of the inputs' magnitudes over size
};

// One rank's view of the job under test.
struct ConformanceRank {
  Backend* backend = nullptr;             // not owned
  BackendKind kind = BackendKind::kGloo;  // the name the backend's errors start with
  int rank = 0;
  int size = 1;
  AverageRounding average = AverageRounding::kSumThenDivide;
  std::function<std::unique_ptr<TestBuffer>(size_t bytes)> allocate = HostBuffer;
  // Element counts above it are left out: for a harness whose ranks are processes on a machine that
  // other tests share, when the backends' own harnesses already run the large counts.
  size_t max_count = SIZE_MAX;
  ConformanceReport* report = nullptr;  // not owned
};

struct ConformanceCase {
  const char* name;  // a gtest-style name: "AllreduceEveryTypeOpCountAndPlacement"
  void (*run)(const ConformanceRank& rank);
};

// Every case, in the order a harness runs them:
//   AllreduceEveryTypeOpCountAndPlacement  every type x op x count 0, 1, 7, 1,000,003, in place and
//                                          out of place, against the float64 reference; the input
//                                          of an out-of-place call unchanged
//   IntegerAveragesTruncateTowardZero      sums of both signs that do not divide evenly
//   Float32SumsWithinTheRoundingBound      values that are not exactly representable
//   BroadcastFromEveryRoot                 every type x count 0, 1, 7, 100,003
//   AllgatherFromEveryPlacement            every type x count 0, 1, 7, 50,001, the send buffer apart,
//                                          this rank's block of recv (in place), or recv's start
//   AlltoallEveryTypeAndCount              every type x count 0, 1, 7, 50,001; every block that crosses
//                                          told apart; the send buffer unchanged
//   AlltoallvUnevenCounts                  every type; rank k sends (k + 2j + shift) % 4 units of 1, 7
//                                          and 12,501 elements to rank j (none included); the send
//                                          buffer unchanged
//   BarrierWaitsForEveryRank               no rank leaves before the last, which is late, has come
//   BaselineIsTheLibrarysSum               float32 and float64 sums; other types and ops refused
//                                          with "<backend>: the baseline allreduce supports ...";
//                                          the backend's collectives still work after it
const std::vector<ConformanceCase>& ConformanceCases();

// Runs every case on this rank, in order.
void RunConformanceCases(const ConformanceRank& rank);

}  // namespace hvdrun::testing

#endif  // HVDRUN_RUNTIME_BACKEND_CONFORMANCE_H_
