// hvdrun-test-collectives: a rank program for end-to-end tests of libhvdrun under `hvdrun --gloo`.
// It initialises from its environment, runs allreduce for every dtype x op x element count (0, 1,
// 7, 1,000,003) in place and out of place, broadcast from every root, allgather and barrier, checks
// every result against a float64 reference, sends a report, and exits 0 only if all matched.
// Output: one "checked N results" line, or one line per mismatch.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "hvdrun/runtime.h"

namespace hvdrun {
namespace {

constexpr size_t kCounts[] = {0, 1, 7, 1'000'003};
constexpr DataType kTypes[] = {DataType::kFloat32,  DataType::kFloat64, DataType::kFloat16,
                               DataType::kBFloat16, DataType::kInt32,   DataType::kInt64};
constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMin, ReduceOp::kMax};

// Rank r contributes (r + 1) * (i % 5 + 1) - 3 at element i: small integers of both signs, so that
// every result is exactly representable in every type, fp16 and bf16 included, for up to 8 ranks.
double Contribution(int rank, size_t i) { return (rank + 1) * static_cast<double>(i % 5 + 1) - 3; }

double Reference(ReduceOp op, DataType type, int size, size_t i) {
  double sum = 0;
  double min = Contribution(0, i);
  double max = min;
  for (int r = 0; r < size; ++r) {
    sum += Contribution(r, i);
    min = std::min(min, Contribution(r, i));
    max = std::max(max, Contribution(r, i));
  }
  switch (op) {
    case ReduceOp::kSum:
      return sum;
    case ReduceOp::kAverage:
      return type == DataType::kInt32 || type == DataType::kInt64 ? std::trunc(sum / size) : sum / size;
    case ReduceOp::kMin:
      return min;
    case ReduceOp::kMax:
      return max;
  }
  return 0;
}

// The largest error a correct result may have: none for exact types; one rounding of the average
// for the narrow floating-point types.
double Tolerance(DataType type, double expected) {
  switch (type) {
    case DataType::kFloat16:
      return std::abs(expected) * 1e-3;
    case DataType::kBFloat16:
      return std::abs(expected) * 8e-3;
    case DataType::kFloat32:
      return std::abs(expected) * 1e-6;
    default:
      return std::abs(expected) * 1e-12;
  }
}

class Checker {
 public:
  explicit Checker(int rank) : rank_(rank) {}
  void Expect(bool ok, const std::string& what) {
    ++checked_;
    if (!ok && failures_++ < 20) std::printf("rank %d: MISMATCH %s\n", rank_, what.c_str());
  }
  int failures() const { return failures_; }
  int64_t checked() const { return checked_; }

 private:
  int rank_;
  int failures_ = 0;
  int64_t checked_ = 0;
};

void CheckAllreduce(Runtime& runtime, Checker& check, DataType type, ReduceOp op, size_t count,
                    bool in_place) {
  size_t bytes = count * DataTypeSize(type);
  std::vector<double> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = Contribution(runtime.rank(), i);
  std::vector<char> send(bytes + 1);
  std::vector<char> recv(bytes + 1);
  ConvertFromDouble(type, values.data(), send.data(), count);
  void* out = in_place ? send.data() : recv.data();
  std::string what = std::string(DataTypeName(type)) + " " + std::string(ReduceOpName(op)) + " count " +
                     std::to_string(count) + (in_place ? " in place" : "");
  Status status = runtime.Allreduce(send.data(), out, count, type, op);
  check.Expect(status.ok(), what + ": " + status.message());
  std::vector<double> got(count);
  ConvertToDouble(type, out, got.data(), count);
  for (size_t i = 0; i < count; ++i) {
    double expected = Reference(op, type, runtime.size(), i);
    if (std::abs(got[i] - expected) > Tolerance(type, expected)) {
      check.Expect(false, what + ": element " + std::to_string(i) + " is " + std::to_string(got[i]) +
                              ", expected " + std::to_string(expected));
      return;
    }
  }
  check.Expect(true, what);
}

void CheckBroadcastAndAllgather(Runtime& runtime, Checker& check) {
  for (int root = 0; root < runtime.size(); ++root) {
    std::vector<int64_t> buffer(1000, runtime.rank() == root ? 100 + root : -1);
    Status status = runtime.Broadcast(buffer.data(), buffer.size(), DataType::kInt64, root);
    bool ok = status.ok();
    for (int64_t value : buffer) ok = ok && value == 100 + root;
    check.Expect(ok, "broadcast from root " + std::to_string(root) + " " + status.message());
  }
  std::vector<float> mine(3, static_cast<float>(runtime.rank()));
  std::vector<float> all(size_t{3} * runtime.size(), -1);
  Status status = runtime.Allgather(mine.data(), all.data(), mine.size(), DataType::kFloat32);
  bool ok = status.ok();
  for (size_t i = 0; i < all.size(); ++i) ok = ok && all[i] == static_cast<float>(static_cast<int>(i / 3));
  check.Expect(ok, "allgather " + status.message());
  status = runtime.Barrier();
  check.Expect(status.ok(), "barrier " + status.message());
}

int Run() {
  StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::InitFromEnvironment();
  if (!runtime.ok()) {
    std::fprintf(stderr, "%s\n", runtime.status().message().c_str());
    return 1;
  }
  Runtime& rt = *runtime.value();
  Checker check(rt.rank());
  for (DataType type : kTypes) {
    for (ReduceOp op : kOps) {
      for (size_t count : kCounts) {
        CheckAllreduce(rt, check, type, op, count, /*in_place=*/false);
        if (count == 7) CheckAllreduce(rt, check, type, op, count, /*in_place=*/true);
      }
    }
  }
  CheckBroadcastAndAllgather(rt, check);
  std::string report = "{\"summary\": {\"checked\": " + std::to_string(check.checked()) +
                       ", \"failures\": " + std::to_string(check.failures()) + "}}";
  if (Status status = rt.SendReport(report); !status.ok()) {
    std::fprintf(stderr, "report: %s\n", status.message().c_str());
    return 1;
  }
  std::printf("rank %d of %d: checked %lld results, %d failed\n", rt.rank(), rt.size(),
              static_cast<long long>(check.checked()), check.failures());
  return check.failures() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace hvdrun

int main() { return hvdrun::Run(); }
