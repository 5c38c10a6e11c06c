// Backend: what each collective library (runtime/backends/<name>/) implements for the Runtime.
//
// A Backend is created, used and destroyed by the Runtime's single collective thread, so an
// implementation need not be thread-safe. Every method is collective: all ranks call it with the
// same arguments (but their own buffers). Errors are one-line Statuses naming the backend and,
// where known, the peer rank. runtime/backend_conformance.h holds the cases every backend must
// pass; a new backend adds a harness that runs them.
#ifndef HVDRUN_RUNTIME_BACKEND_H_
#define HVDRUN_RUNTIME_BACKEND_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "hvdrun/key_value_store.h"
#include "hvdrun/status.h"
#include "hvdrun/types.h"

namespace hvdrun {

struct BackendContext {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  KeyValueStore* store = nullptr;  // not owned; outlives the backend
  std::string host_address;
  std::chrono::milliseconds timeout{60000};
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Status Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) = 0;
  virtual Status Broadcast(void* buffer, size_t count, DataType type, int root) = 0;
  // `send` may be this rank's block of `recv` (in place) or lie anywhere else, also inside recv as
  // long as it does not partly overlap this rank's block.
  virtual Status Allgather(const void* send, void* recv, size_t count, DataType type) = 0;
  // Block j of this rank's `send` (`count` elements at j * count) goes to rank j, which receives it
  // as its block `rank` of `recv`: the exchange under a reduce-scatter whose reduction the caller
  // does itself (the fp8 compressed allreduce). send and recv hold size * count elements each and
  // must not overlap.
  virtual Status Alltoall(const void* send, void* recv, size_t count, DataType type) = 0;
  virtual Status Barrier() = 0;
  // The library's own in-place allreduce with no conversion (see Runtime::BaselineAllreduce).
  virtual Status BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) = 0;
};

// Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte: for the backends whose library
// takes an in-place call only in one form.
inline bool BuffersOverlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto a_begin = reinterpret_cast<uintptr_t>(a);
  const auto b_begin = reinterpret_cast<uintptr_t>(b);
  return a_begin < b_begin + b_bytes && b_begin < a_begin + a_bytes;
}

// Creates the backend `kind` for this rank, bootstrapping through context.store. A backend that
// was not built into this library is an error that says so and how to build it. In libhvdrun.so
// each backend is a module loaded on its first use: a module that is missing or cannot be loaded
// is an error naming its path and what to do (backend_module_loader.h). backend.cc says where the
// two definitions are, and how to add a backend.
StatusOr<std::unique_ptr<Backend>> CreateBackend(BackendKind kind, const BackendContext& context);

// The error for a backend that was not built: backend 'nccl' is not built into this libhvdrun (...).
Status BackendNotBuiltIn(BackendKind kind);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKEND_H_
