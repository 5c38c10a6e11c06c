// Runtime's reducescatters (hvdrun/runtime.h): checked here, run by the negotiated engine
// (runtime/request/run_request.cc alone, runtime/negotiation/fused_execution.cc fused).
#include <string>
#include <utility>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/backend.h"
#include "runtime/call_checks.h"
#include "runtime/process_set_table.h"
#include "runtime/request/reducescatter_parts.h"
#include "runtime/request/tensor_request.h"
#include "runtime/runtime_impl.h"

namespace hvdrun {
namespace {

// The checks of one reducescatter whose recv gets `received` elements.
Status ValidateReducescatter(const std::string& call, const std::string& name, const void* send,
                             const void* recv, size_t count, DataType type, ReduceOp op, size_t row,
                             size_t received, bool negotiated) {
  Status valid = ValidateBuffers(call.c_str(), send, send, count, type);
  if (valid.ok()) valid = ValidateOp(call.c_str(), op);
  if (valid.ok() && (row == 0 || count % row != 0)) {
    valid = Status::Error(call + ": " + std::to_string(count) + " elements are not whole rows of " +
                          std::to_string(row));
  }
  if (valid.ok() && received > 0 && recv == nullptr) {
    valid = Status::Error(call + ": null receive buffer for " + std::to_string(received) + " elements");
  }
  const size_t element = DataTypeSize(type);
  if (valid.ok() && received > 0 && BuffersOverlap(send, count * element, recv, received * element)) {
    valid = Status::Error(call + ": the send and receive buffers must not overlap");
  }
  if (valid.ok()) valid = ValidateName(call, name, negotiated);
  return valid;
}

}  // namespace

size_t Runtime::ReducescatterCount(size_t count, size_t row, int rank, int process_set) const {
  StatusOr<int> ranks = process_set == 0 ? StatusOr<int>(size()) : ProcessSetSize(process_set);
  if (!ranks.ok() || rank < 0 || rank >= ranks.value()) return 0;
  return static_cast<size_t>(ReducescatterCounts(count, row, ranks.value())[static_cast<size_t>(rank)]);
}

CollectiveHandle Runtime::ReducescatterAsync(const std::string& name, const void* send, void* recv,
                                             size_t count, DataType type, ReduceOp op, size_t row,
                                             int process_set) {
  return ReducescatterAsync(name, send, recv, count, type, op, row, ScaleFactors{}, process_set);
}

CollectiveHandle Runtime::ReducescatterAsync(const std::string& name, const void* send, void* recv,
                                             size_t count, DataType type, ReduceOp op, size_t row,
                                             ScaleFactors factors, int process_set) {
  const std::string call = "Reducescatter('" + name + "')";
  if (Status valid = ValidateFactors(call, factors.prescale, factors.postscale); !valid.ok()) {
    return CollectiveHandle::State::Completed(std::move(valid));
  }
  StatusOr<SetEngine> engine = sets_->Engine(*impl_, process_set, call);
  if (!engine.ok()) return CollectiveHandle::State::Completed(engine.status());
  RuntimeImpl& impl = *engine.value().impl;
  const RuntimeOptions& place = impl.options();
  std::vector<uint64_t> counts = ReducescatterCounts(count, row, place.size);
  Status valid =
      ValidateReducescatter(call, name, send, recv, count, type, op, row,
                            static_cast<size_t>(counts[static_cast<size_t>(place.rank)]), impl.negotiated());
  if (!valid.ok()) return CollectiveHandle::State::Completed(std::move(valid));
  TensorRequest request = Request(impl.Named(name), CollectiveKind::kReducescatter, count, type, op);
  request.row = row;
  request.counts = std::move(counts);
  request.prescale = factors.prescale;
  request.postscale = factors.postscale;
  return engine.value().Track(impl.Submit(std::move(request), send, recv));
}

Status Runtime::Reducescatter(const std::string& name, const void* send, void* recv, size_t count,
                              DataType type, ReduceOp op, size_t row, int process_set) {
  return ReducescatterAsync(name, send, recv, count, type, op, row, process_set).Wait();
}

std::vector<CollectiveHandle> Runtime::GroupedReducescatterAsync(
    const std::string& name, const std::vector<ReducescatterTensor>& tensors, DataType type, ReduceOp op,
    int process_set) {
  std::vector<CollectiveHandle> handles;
  StatusOr<int> place = process_set == 0 ? StatusOr<int>(rank()) : ProcessSetRank(process_set);
  for (size_t index = 0; index < tensors.size(); ++index) {
    const ReducescatterTensor& tensor = tensors[index];
    const std::string member = name + "." + std::to_string(index);
    Status valid = place.status();
    if (valid.ok()) {
      valid = ValidateReducescatter("GroupedReducescatter('" + member + "')", member, tensor.send,
                                    tensor.recv, tensor.count, type, op, tensor.row,
                                    ReducescatterCount(tensor.count, tensor.row, place.value(), process_set),
                                    impl_->negotiated());
    }
    if (!valid.ok()) {
      handles.clear();
      for (size_t i = 0; i < tensors.size(); ++i) {
        handles.push_back(CollectiveHandle::State::Completed(valid));
      }
      return handles;
    }
  }
  for (size_t index = 0; index < tensors.size(); ++index) {
    const ReducescatterTensor& tensor = tensors[index];
    handles.push_back(ReducescatterAsync(name + "." + std::to_string(index), tensor.send, tensor.recv,
                                         tensor.count, type, op, tensor.row, process_set));
  }
  return handles;
}

}  // namespace hvdrun
