// hvdrun._C's collectives over buffer addresses, and the handles they return.
//
// Buffers cross as addresses (a tensor's data_ptr()), element counts and type names (ParseDataType's,
// ParseReduceOp's, ParseCompressionFormat's: an unknown one raises ValueError), so that this module
// depends on libhvdrun and Python only, not on libtorch's C++ ABI: the Python layer checks that a
// tensor is contiguous and where it lives, keeps it alive until its handle completes (Ready(), past
// a WaitOnStream that returned before), and never writes it meanwhile, in device memory not before
// the stream it waited on has passed the collective (runtime.h's contract on buffers). A call given a
// `stream` (a cudaStream_t, 0 for the default stream) goes to the device runtime where the job has one
// (RuntimeFor in python/module_runtimes.h), so that it reads its buffers once that stream has written them.
// In a job of one rank every collective is the identity (a copy where the output is another buffer; the
// Python layer never gives device memory to a job without a device runtime), and its handle has
// completed when it is returned.
//
// Waiting (Handle::Wait, Handle::WaitOnStream, GatherHandle::Wait) releases the GIL, so that autograd's
// hooks and other Python threads run meanwhile. Failures raise RuntimeError with libhvdrun's one-line
// message; a collective that failed leaves the runtime broken (runtime.h).
#ifndef HVDRUN_PYTHON_MODULE_COLLECTIVES_H_
#define HVDRUN_PYTHON_MODULE_COLLECTIVES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hvdrun/collective_handle.h"
#include "hvdrun/runtime.h"

namespace hvdrun::python {

// An asynchronous collective; in a job of one rank it completed when it was made.
class Handle {
 public:
  Handle() = default;
  explicit Handle(CollectiveHandle handle) : handle_(std::move(handle)) {}
  // Blocks until the collective has run; raises RuntimeError if it failed.
  void Wait();
  // CollectiveHandle::WaitOnStream: on the device runtime, returns once the collective's work is
  // queued, the CUDA stream `stream` (a cudaStream_t as an int; 0: the default stream) made to wait
  // for its end; the buffers stay in use by the device until Ready(), so the caller keeps them alive
  // until then. Otherwise (the host runtime, a job of one rank) the same as Wait(). Raises as Wait().
  void WaitOnStream(uintptr_t stream);
  bool Ready() const { return !handle_ || handle_->Ready(); }

 private:
  std::optional<CollectiveHandle> handle_;
};

// An allgather whose ranks may give different numbers of rows (or an alltoall); the result stays here
// until copied out.
class GatherHandle {
 public:
  // `result` is the one the runtime fills (its address does not move); `handle` completes when it has.
  GatherHandle(std::unique_ptr<AllgatherResult> result, Handle handle)
      : result_(std::move(result)), handle_(std::move(handle)) {}
  void Wait() { handle_.Wait(); }
  // Handle::WaitOnStream: the host runtime's, so the same as Wait() (for a group of calls, some on the
  // device runtime, completed on a stream together).
  void WaitOnStream(uintptr_t stream) { handle_.WaitOnStream(stream); }
  bool Ready() const { return handle_.Ready(); }
  std::vector<uint64_t> Counts() const { return result_->counts; }
  // Copies the gathered bytes to `address`, which must hold them (the counts' sum times the type's size).
  void CopyTo(uintptr_t address) const;

 private:
  std::unique_ptr<AllgatherResult> result_;
  Handle handle_;
};

// `compression`: a CompressionFormat's name ("bf16", "fp8", ...) for this allreduce's wire format, or
// empty for the job's (hvdrun --compression). `stream`: see RuntimeFor(). `prescale`, `postscale`:
// Runtime::ScaleFactors, applied by the engine; a job of one rank has none, and its caller scales.
// `shape` (here and in the calls below): the tensor's shape, which the ranks compare
// (Runtime::SetCallerShape); empty for none.
Handle AllreduceAsync(const std::string& name, uintptr_t send, uintptr_t recv, size_t count,
                      const std::string& type_name, const std::string& op_name,
                      const std::string& compression, const std::optional<uintptr_t>& stream, int process_set,
                      double prescale, double postscale, const std::vector<int64_t>& shape);
// `name` empty: named by the runtime, by its place in this rank's sequence of unnamed calls.
// `stream`: see RuntimeFor().
Handle BroadcastAsync(const std::string& name, uintptr_t buffer, size_t count, const std::string& type_name,
                      int root, const std::optional<uintptr_t>& stream, int process_set,
                      const std::vector<int64_t>& shape);
// `name` empty: named by the runtime, by its place in this rank's sequence of unnamed calls.
GatherHandle AllgatherAsync(const std::string& name, uintptr_t send, size_t count,
                            const std::string& type_name, size_t row, int process_set,
                            const std::vector<int64_t>& shape);
// Runtime::AlltoallAsync: `splits[j]` elements of `send` (back to back in rank order) go to rank j;
// the result holds what every rank sent this one. `name` empty: named by the runtime.
GatherHandle AlltoallAsync(const std::string& name, uintptr_t send, const std::vector<uint64_t>& splits,
                           const std::string& type_name, size_t row, int process_set,
                           const std::vector<int64_t>& shape);
// The collectives of equal blocks into the caller's buffer `recv` (size() * count elements): every
// rank gives the same count, so a caller whose ranks' rows differ pads them to the largest first.
// Over NCCL both buffers are device memory written on `stream`.
// Block j of `send` goes to rank j, which receives it as block rank() of `recv`.
Handle AlltoallIntoAsync(const std::string& name, uintptr_t send, uintptr_t recv, size_t count,
                         const std::string& type_name, const std::optional<uintptr_t>& stream,
                         int process_set);
// Every rank's block, in rank order.
Handle AllgatherIntoAsync(const std::string& name, uintptr_t send, uintptr_t recv, size_t count,
                          const std::string& type_name, const std::optional<uintptr_t>& stream,
                          int process_set);
// Runtime::ReducescatterAsync: `recv` gets this rank's rows (Horovod's split of count / row rows) of `op`
// over the ranks of `process_set` of `send`, with scale factors as AllreduceAsync's. `stream`: see
// RuntimeFor(). In a job of one rank, a copy.
Handle ReducescatterAsync(const std::string& name, uintptr_t send, uintptr_t recv, size_t count,
                          const std::string& type_name, const std::string& op_name, size_t row,
                          const std::optional<uintptr_t>& stream, int process_set, double prescale,
                          double postscale, const std::vector<int64_t>& shape);

}  // namespace hvdrun::python

#endif  // HVDRUN_PYTHON_MODULE_COLLECTIVES_H_
