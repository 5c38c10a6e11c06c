// GlooExchange: small allreduces as one direct exchange, over TCP pairs that the calling thread
// drives itself (Gloo's synchronous mode).
//
// Why not gloo::allreduce for small buffers. Gloo moves a buffer round a ring, 2(n-1) steps, each
// a rendezvous of notification messages that Gloo's device thread handles. That thread takes each
// pair's lock with try_lock and, when a caller thread holds it (writing to the socket), goes back
// to a level-triggered epoll that reports the same unread data at once: it spins in epoll_wait
// until the holder runs again. When the spinning thread has preempted the holder on the same core,
// that takes a scheduler tick (4 ms at HZ=250). On a 2-core machine a 4-byte allreduce through the
// negotiated path (the negotiation's counters, then the tensor) had such a stall in about one call
// of six, and the spinning took half a core.
//
// Here each rank sends its whole buffer to every other rank and reduces the n buffers itself, in
// rank order, so every rank computes the same bits: one message each way per peer, sent and
// received by the caller's own blocking send and recv; no device thread, no notifications. The
// pairs are a second full mesh, apart from the one gloo::allreduce uses.
//
// Only for buffers of at most kMaxBytes: a blocking send that small always fits the sockets'
// buffers, so ranks that all send before they receive cannot wait on each other. Like the Backend
// it serves, used from one thread only. Everything here throws what Gloo throws; GlooBackend turns
// that into a Status.
#ifndef HVDRUN_RUNTIME_BACKENDS_GLOO_GLOO_EXCHANGE_H_
#define HVDRUN_RUNTIME_BACKENDS_GLOO_GLOO_EXCHANGE_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include "hvdrun/types.h"

namespace gloo {
class Context;
namespace transport {
class Buffer;
class Device;
}  // namespace transport
namespace rendezvous {
class Store;
}  // namespace rendezvous
}  // namespace gloo

namespace hvdrun {

class GlooExchange {
 public:
  // The largest buffer, in bytes, that Allreduce takes.
  static constexpr size_t kMaxBytes = 8192;

  // Connects this rank's pairs to every other rank's through `store` (a prefix of the exchange's
  // own; its waits bound by the store), on `device`, with `timeout` on every connection, send and
  // receive: the backend's collective wait limit (gloo_backend.h). Every rank of the group calls it.
  GlooExchange(gloo::rendezvous::Store& store, std::shared_ptr<gloo::transport::Device> device, int rank,
               int size, std::chrono::milliseconds timeout);
  ~GlooExchange();
  GlooExchange(const GlooExchange&) = delete;
  GlooExchange& operator=(const GlooExchange&) = delete;

  // recv = `op` over every rank's `send` (kAverage: the sum; the caller divides), for
  // count * DataTypeSize(type) <= kMaxBytes; send may equal recv.
  void Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op);

 private:
  int rank_;
  int size_;
  // Declared first, destroyed last: the buffers below unregister from its pairs as they go.
  std::shared_ptr<gloo::Context> context_;
  std::vector<char> mine_;                 // this rank's contribution, as sent
  std::vector<std::vector<char>> theirs_;  // by rank: what that rank sent (this rank's entry unused)
  std::vector<std::unique_ptr<gloo::transport::Buffer>> send_buffers_;  // by rank
  std::vector<std::unique_ptr<gloo::transport::Buffer>> recv_buffers_;  // by rank
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKENDS_GLOO_GLOO_EXCHANGE_H_
