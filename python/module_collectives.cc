// hvdrun._C's collectives (python/module_collectives.h).
#include "python/module_collectives.h"

#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hvdrun/runtime.h"
#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "python/module_runtimes.h"

namespace py = pybind11;

namespace hvdrun::python {
namespace {

DataType TypeByName(const std::string& name) {
  std::optional<DataType> type = ParseDataType(name);
  if (!type) throw std::invalid_argument("hvdrun._C: unknown data type '" + name + "'");
  return *type;
}

ReduceOp OpByName(const std::string& name) {
  std::optional<ReduceOp> op = ParseReduceOp(name);
  if (!op) throw std::invalid_argument("hvdrun._C: unknown reduce op '" + name + "'");
  return *op;
}

void CopyIfApart(uintptr_t send, uintptr_t recv, size_t bytes) {
  if (send != recv && bytes > 0) std::memcpy(Address(recv), Address(send), bytes);
}

// A negotiated collective of equal blocks into the caller's buffer `recv` (size() * count elements),
// Runtime::AllgatherAsync or Runtime::AlltoallAsync of that form: every rank gives the same count, so
// a caller whose ranks' rows differ pads them to the largest first. `stream`: see RuntimeFor() (over
// NCCL both buffers are device memory written on that stream). In a job of one rank both forms copy.
using BlocksCollective = CollectiveHandle (Runtime::*)(const std::string&, const void*, void*, size_t,
                                                       DataType, int);

Handle BlocksAsync(const char* call, BlocksCollective collective, const std::string& name, uintptr_t send,
                   uintptr_t recv, size_t count, const std::string& type_name,
                   const std::optional<uintptr_t>& stream, int process_set) {
  RequireInit(call);
  const DataType type = TypeByName(type_name);
  Runtime* runtime = RuntimeFor(stream);
  if (runtime == nullptr) {
    CopyIfApart(send, recv, count * DataTypeSize(type));
    return Handle();
  }
  return Handle((runtime->*collective)(name, Address(send), Address(recv), count, type, process_set));
}

// Runtime::SetCallerShape for the calls made while it lives: the shape of the tensor a collective of
// hvdrun.torch is submitted for, which the ranks compare (empty: none).
class CallerShape {
 public:
  explicit CallerShape(const std::vector<int64_t>& shape) { Runtime::SetCallerShape(shape); }
  ~CallerShape() { Runtime::SetCallerShape({}); }
  CallerShape(const CallerShape&) = delete;
  CallerShape& operator=(const CallerShape&) = delete;
};

}  // namespace

void Handle::Wait() {
  if (!handle_) return;
  Status status;
  {
    py::gil_scoped_release release;
    status = handle_->Wait();
  }
  Check(status);
}

void Handle::WaitOnStream(uintptr_t stream) {
  if (!handle_) return;
  Status status;
  {
    py::gil_scoped_release release;
    status = handle_->WaitOnStream(Address(stream));
  }
  Check(status);
}

void GatherHandle::CopyTo(uintptr_t address) const {
  if (!result_->data.empty()) std::memcpy(Address(address), result_->data.data(), result_->data.size());
}

Handle AllreduceAsync(const std::string& name, uintptr_t send, uintptr_t recv, size_t count,
                      const std::string& type_name, const std::string& op_name,
                      const std::string& compression, const std::optional<uintptr_t>& stream, int process_set,
                      double prescale, double postscale, const std::vector<int64_t>& shape) {
  RequireInit("allreduce");
  const DataType type = TypeByName(type_name);
  const ReduceOp op = OpByName(op_name);
  std::optional<CompressionFormat> format;
  if (!compression.empty()) {
    format = ParseCompressionFormat(compression);
    if (!format) throw std::invalid_argument("hvdrun._C: unknown compression format '" + compression + "'");
  }
  Runtime* runtime = RuntimeFor(stream);
  if (runtime == nullptr) {
    CopyIfApart(send, recv, count * DataTypeSize(type));
    return Handle();
  }
  const CallerShape shaped(shape);
  return Handle(runtime->AllreduceAsync(name, Address(send), Address(recv), count, type, op,
                                        format.value_or(runtime->compression().format),
                                        Runtime::ScaleFactors{prescale, postscale}, process_set));
}

Handle BroadcastAsync(const std::string& name, uintptr_t buffer, size_t count, const std::string& type_name,
                      int root, const std::optional<uintptr_t>& stream, int process_set,
                      const std::vector<int64_t>& shape) {
  RequireInit("broadcast");
  const DataType type = TypeByName(type_name);
  if (root < 0 || root >= Size()) {
    throw std::invalid_argument("hvdrun.torch.broadcast: root_rank " + std::to_string(root) +
                                " is not a rank of this job of " + std::to_string(Size()));
  }
  Runtime* runtime = RuntimeFor(stream);
  if (runtime == nullptr) return Handle();
  const CallerShape shaped(shape);
  if (name.empty()) return Handle(runtime->BroadcastAsync(Address(buffer), count, type, root, process_set));
  return Handle(runtime->BroadcastAsync(name, Address(buffer), count, type, root, process_set));
}

GatherHandle AllgatherAsync(const std::string& name, uintptr_t send, size_t count,
                            const std::string& type_name, size_t row, int process_set,
                            const std::vector<int64_t>& shape) {
  RequireInit("allgather");
  const DataType type = TypeByName(type_name);
  auto result = std::make_unique<AllgatherResult>();
  if (HostRuntime() == nullptr) {
    result->counts = {count};
    result->data.resize(count * DataTypeSize(type));
    if (!result->data.empty()) std::memcpy(result->data.data(), Address(send), result->data.size());
    return GatherHandle(std::move(result), Handle());
  }
  const CallerShape shaped(shape);
  CollectiveHandle handle =
      name.empty()
          ? HostRuntime()->AllgatherAsync(Address(send), count, type, row, result.get(), process_set)
          : HostRuntime()->AllgatherAsync(name, Address(send), count, type, row, result.get(), process_set);
  return GatherHandle(std::move(result), Handle(std::move(handle)));
}

GatherHandle AlltoallAsync(const std::string& name, uintptr_t send, const std::vector<uint64_t>& splits,
                           const std::string& type_name, size_t row, int process_set,
                           const std::vector<int64_t>& shape) {
  RequireInit("alltoall");
  const DataType type = TypeByName(type_name);
  auto result = std::make_unique<AlltoallResult>();
  if (HostRuntime() == nullptr) {
    if (splits.size() != 1) {
      throw std::invalid_argument("hvdrun.torch.alltoall: " + std::to_string(splits.size()) +
                                  " splits for a job of 1 rank");
    }
    result->counts = splits;
    result->data.resize(splits[0] * DataTypeSize(type));
    if (!result->data.empty()) std::memcpy(result->data.data(), Address(send), result->data.size());
    return GatherHandle(std::move(result), Handle());
  }
  const CallerShape shaped(shape);
  CollectiveHandle handle =
      name.empty()
          ? HostRuntime()->AlltoallAsync(Address(send), splits, type, row, result.get(), process_set)
          : HostRuntime()->AlltoallAsync(name, Address(send), splits, type, row, result.get(), process_set);
  return GatherHandle(std::move(result), Handle(std::move(handle)));
}

Handle AlltoallIntoAsync(const std::string& name, uintptr_t send, uintptr_t recv, size_t count,
                         const std::string& type_name, const std::optional<uintptr_t>& stream,
                         int process_set) {
  return BlocksAsync("alltoall", &Runtime::AlltoallAsync, name, send, recv, count, type_name, stream,
                     process_set);
}

Handle AllgatherIntoAsync(const std::string& name, uintptr_t send, uintptr_t recv, size_t count,
                          const std::string& type_name, const std::optional<uintptr_t>& stream,
                          int process_set) {
  return BlocksAsync("allgather", &Runtime::AllgatherAsync, name, send, recv, count, type_name, stream,
                     process_set);
}

Handle ReducescatterAsync(const std::string& name, uintptr_t send, uintptr_t recv, size_t count,
                          const std::string& type_name, const std::string& op_name, size_t row,
                          const std::optional<uintptr_t>& stream, int process_set, double prescale,
                          double postscale, const std::vector<int64_t>& shape) {
  RequireInit("reducescatter");
  const DataType type = TypeByName(type_name);
  const ReduceOp op = OpByName(op_name);
  Runtime* runtime = RuntimeFor(stream);
  if (runtime == nullptr) {
    CopyIfApart(send, recv, count * DataTypeSize(type));
    return Handle();
  }
  const CallerShape shaped(shape);
  return Handle(runtime->ReducescatterAsync(name, Address(send), Address(recv), count, type, op, row,
                                            Runtime::ScaleFactors{prescale, postscale}, process_set));
}

}  // namespace hvdrun::python
