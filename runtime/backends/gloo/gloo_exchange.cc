#include "runtime/backends/gloo/gloo_exchange.h"

#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/buffer.h>
#include <gloo/transport/device.h>
#include <gloo/transport/pair.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "runtime/reduction_kernels.h"

namespace hvdrun {
namespace {

// The one slot of the exchange's pairs: each pair carries one message each way per call.
constexpr int kSlot = 0;

}  // namespace

GlooExchange::GlooExchange(gloo::rendezvous::Store& store, std::shared_ptr<gloo::transport::Device> device,
                           int rank, int size, std::chrono::milliseconds timeout)
    : rank_(rank),
      size_(size),
      mine_(kMaxBytes),
      theirs_(static_cast<size_t>(size)),
      send_buffers_(static_cast<size_t>(size)),
      recv_buffers_(static_cast<size_t>(size)) {
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->setTimeout(timeout);
  context->connectFullMesh(store, device);
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    std::unique_ptr<gloo::transport::Pair>& pair = context->getPair(peer);
    // Synchronous: the pair leaves the device thread's epoll, and its socket blocks, with the
    // context's timeout on every send and receive.
    pair->setSync(true, /*busyPoll=*/false);
    std::vector<char>& theirs = theirs_[static_cast<size_t>(peer)];
    theirs.resize(kMaxBytes);
    send_buffers_[static_cast<size_t>(peer)] = pair->createSendBuffer(kSlot, mine_.data(), kMaxBytes);
    recv_buffers_[static_cast<size_t>(peer)] = pair->createRecvBuffer(kSlot, theirs.data(), kMaxBytes);
  }
  context_ = std::move(context);
}

GlooExchange::~GlooExchange() = default;

void GlooExchange::Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) {
  const size_t bytes = count * DataTypeSize(type);
  if (bytes > kMaxBytes) {
    throw std::invalid_argument("the direct exchange takes at most " + std::to_string(kMaxBytes) +
                                " bytes, not " + std::to_string(bytes));
  }
  if (bytes == 0) return;
  std::memcpy(mine_.data(), send, bytes);
  // Every send before any receive: each fits the socket's buffer (kMaxBytes), so no rank waits for
  // another to receive before it can receive itself. A failure names the peer's rank.
  int peer = 0;
  try {
    for (peer = 0; peer < size_; ++peer) {
      if (peer != rank_) send_buffers_[static_cast<size_t>(peer)]->send(0, bytes);
    }
    for (peer = 0; peer < size_; ++peer) {
      if (peer == rank_) continue;
      recv_buffers_[static_cast<size_t>(peer)]->waitRecv();
      send_buffers_[static_cast<size_t>(peer)]->waitSend();
    }
  } catch (const gloo::IoException& e) {
    throw gloo::IoException("with rank " + std::to_string(peer) + ": " + e.what());
  }
  // In rank order on every rank, so that every rank rounds alike.
  auto contribution = [&](int r) -> const void* {
    return r == rank_ ? mine_.data() : theirs_[static_cast<size_t>(r)].data();
  };
  const ReductionKernel kernel = ReductionKernelFor(type, op);
  std::memcpy(recv, contribution(0), bytes);
  for (int r = 1; r < size_; ++r) kernel(recv, recv, contribution(r), count);
}

}  // namespace hvdrun
