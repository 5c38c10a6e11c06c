// GlooBackend: the Backend over Facebook's Gloo, on its TCP transport.
//
// Create() bootstraps a full mesh of TCP connections: this rank listens on
// BackendContext::host_address and exchanges addresses with the others through the job's key-value store,
// under a key prefix of its own ("gloo/<n>/", n counting the Gloo contexts this rank has created),
// so that several backends created one after another through one store cannot clash. Every
// bootstrap wait and every collective is bounded by BackendContext::timeout.
//
// Allreduces of at most GlooExchange::kMaxBytes go through a GlooExchange (a second mesh of pairs
// that the calling thread drives itself; see gloo_exchange.h for why), larger ones through
// gloo::allreduce.
//
// Gloo reports failures by throwing (gloo::EnforceNotMet, gloo::IoException, ...). Every method
// catches everything at this boundary and returns a one-line Status: "gloo: allreduce failed: ...".
// Used only from the Runtime's collective thread (see backend.h): not thread-safe.
#ifndef HVDRUN_RUNTIME_BACKENDS_GLOO_GLOO_BACKEND_H_
#define HVDRUN_RUNTIME_BACKENDS_GLOO_GLOO_BACKEND_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "runtime/backend.h"

namespace gloo {
class Context;
}  // namespace gloo

namespace hvdrun {

class GlooExchange;

class GlooBackend : public Backend {
 public:
  static StatusOr<std::unique_ptr<Backend>> Create(const BackendContext& context);
  ~GlooBackend() override;

  Status Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) override;
  Status Broadcast(void* buffer, size_t count, DataType type, int root) override;
  Status Allgather(const void* send, void* recv, size_t count, DataType type) override;
  Status Alltoall(const void* send, void* recv, size_t count, DataType type) override;
  Status Alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                   const std::vector<size_t>& recv_counts, DataType type) override;
  Status Barrier() override;
  // float32 and float64 with kSum only: gloo::allreduce with gloo::sum, nothing else.
  Status BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) override;

 private:
  GlooBackend(std::shared_ptr<gloo::Context> context, std::unique_ptr<GlooExchange> exchange, int size);

  std::shared_ptr<gloo::Context> context_;
  std::unique_ptr<GlooExchange> exchange_;  // null in a group of one
  int size_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKENDS_GLOO_GLOO_BACKEND_H_
