// GlooBackend: the Backend over Facebook's Gloo, on its TCP transport.
//
// Create() bootstraps a full mesh of TCP connections: this rank listens on
// BackendContext::host_address and exchanges addresses with the others through the job's key-value store,
// under a key prefix of its own ("gloo/<n>/", n counting the Gloo contexts this rank has created),
// so that several backends created one after another through one store cannot clash. Every
// bootstrap wait is bounded by BackendContext::timeout (HOROVOD_GLOO_TIMEOUT_SECONDS).
//
// Waiting inside a collective. Gloo bounds every wait of a collective by its context's timeout, and
// a wait that times out closes every pair of the context: the backend is dead. A peer rank that is
// alive but busy in user code (validation, a checkpoint) before its next collective would end the
// job at that timeout; Horovod waits for it (its stall inspector says what is waited for). So once
// connected, the context's timeout, and the GlooExchange pairs' (a socket receive timeout fixed when
// they connect), is BackendContext::collective_limit: the stall shutdown time when the user set one,
// else 30 days (CollectiveWaitLimit), which no live job reaches. A peer that is gone fails the
// collective at once all the same: its process's end closes its sockets, and Gloo throws "Connection
// closed by peer" (or reset) to the ranks waiting for it. A peer that hangs mid-transfer without
// closing (a lost host) is the collective watchdog's to report (runtime/collective_watchdog.h).
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
