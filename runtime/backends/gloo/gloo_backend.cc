#include "runtime/backends/gloo/gloo_backend.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/attr.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include "runtime/backends/gloo/gloo_exchange.h"
#include "runtime/backends/gloo/gloo_store.h"
#include "runtime/one_line.h"
#include "runtime/reduction_kernels.h"

namespace hvdrun {
namespace {

// Runs `body`, turning anything it throws into "gloo: <what> failed: <message>".
template <typename Body>
Status Guarded(std::string_view what, Body&& body) {
  try {
    body();
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::Error("gloo: " + std::string(what) + " failed: " + OneLine(e.what()));
  } catch (...) {
    return Status::Error("gloo: " + std::string(what) + " failed: unknown exception");
  }
}

}  // namespace

StatusOr<std::unique_ptr<Backend>> GlooBackend::Create(const BackendContext& context) {
  if (context.store == nullptr) return Status::Error("gloo: no store to bootstrap through");
  const std::string rank_key = "gloo/contexts/rank" + std::to_string(context.rank);
  StatusOr<int64_t> instance = context.store->Add(rank_key, 1);
  if (!instance.ok()) return Status::Error("gloo: bootstrap: " + instance.status().message());

  std::shared_ptr<gloo::rendezvous::Context> gloo_context;
  std::unique_ptr<GlooExchange> exchange;
  const std::string where = "connecting rank " + std::to_string(context.rank) + " of " +
                            std::to_string(context.size) + " over TCP on " + context.host_address;
  Status status = Guarded(where, [&] {
    GlooStore store(context.store, "gloo/" + std::to_string(instance.value()) + "/", context.timeout);
    gloo::transport::tcp::attr attr;
    attr.hostname = context.host_address;
    std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice(attr);
    gloo_context = std::make_shared<gloo::rendezvous::Context>(context.rank, context.size);
    gloo_context->setTimeout(context.timeout);
    gloo_context->connectFullMesh(store, device);
    // From here on the context's timeout bounds each collective's waits (see gloo_backend.h).
    const std::chrono::milliseconds wait_limit = CollectiveWaitLimit(context.collective_limit);
    gloo_context->setTimeout(wait_limit);
    if (context.size > 1) {
      GlooStore exchange_store(context.store, "gloo/" + std::to_string(instance.value()) + "/exchange/",
                               context.timeout);
      exchange =
          std::make_unique<GlooExchange>(exchange_store, device, context.rank, context.size, wait_limit);
    }
    // connectFullMesh returns once this rank's side of every pair is up; a peer may still be
    // finishing its own. Without this barrier a rank could run ahead, finish and close its pairs
    // while a peer is still connecting ("Connection closed by peer").
    gloo::BarrierOptions barrier(gloo_context);
    gloo::barrier(barrier);
  });
  if (!status.ok()) return status;
  return std::unique_ptr<Backend>(
      new GlooBackend(std::move(gloo_context), std::move(exchange), context.size));
}

GlooBackend::GlooBackend(std::shared_ptr<gloo::Context> context, std::unique_ptr<GlooExchange> exchange,
                         int size)
    : context_(std::move(context)), exchange_(std::move(exchange)), size_(size) {}

GlooBackend::~GlooBackend() = default;

Status GlooBackend::Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) {
  if (count == 0) return Status::Ok();
  return Guarded("allreduce", [&] {
    if (exchange_ != nullptr && count * DataTypeSize(type) <= GlooExchange::kMaxBytes) {
      exchange_->Allreduce(send, recv, count, type, op);
      if (op == ReduceOp::kAverage) DivideBy(type, recv, count, size_);
      return;
    }
    WithElementType(type, [&]<typename T>() {
      gloo::AllreduceOptions options(context_);
      T* out = static_cast<T*>(recv);
      if (send != recv) options.setInput(const_cast<T*>(static_cast<const T*>(send)), count);
      options.setOutput(out, count);
      options.setReduceFunction(ReductionKernelFor(type, op));
      gloo::allreduce(options);
      if (op == ReduceOp::kAverage) DivideBy(type, out, count, size_);
    });
  });
}

Status GlooBackend::Broadcast(void* buffer, size_t count, DataType type, int root) {
  if (count == 0) return Status::Ok();
  return Guarded("broadcast", [&] {
    gloo::BroadcastOptions options(context_);
    options.setOutput(static_cast<char*>(buffer), count * DataTypeSize(type));
    options.setRoot(root);
    gloo::broadcast(options);
  });
}

Status GlooBackend::Allgather(const void* send, void* recv, size_t count, DataType type) {
  if (count == 0) return Status::Ok();
  return Guarded("allgather", [&] {
    const size_t bytes = count * DataTypeSize(type);
    gloo::AllgatherOptions options(context_);
    options.setInput(const_cast<char*>(static_cast<const char*>(send)), bytes);
    options.setOutput(static_cast<char*>(recv), bytes * static_cast<size_t>(size_));
    gloo::allgather(options);
  });
}

Status GlooBackend::Alltoall(const void* send, void* recv, size_t count, DataType type) {
  if (count == 0) return Status::Ok();
  const size_t bytes = count * DataTypeSize(type) * static_cast<size_t>(size_);
  if (BuffersOverlap(send, bytes, recv, bytes)) {
    return Status::Error("gloo: alltoall: the send and receive buffers overlap on rank " +
                         std::to_string(context_->rank));
  }
  return Guarded("alltoall", [&] {
    gloo::AlltoallOptions options(context_);
    options.setInput(const_cast<char*>(static_cast<const char*>(send)), bytes);
    options.setOutput(static_cast<char*>(recv), bytes);
    gloo::alltoall(options);
  });
}

Status GlooBackend::Alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                              const std::vector<size_t>& recv_counts, DataType type) {
  if (Status counts = CheckAlltoallvCounts("gloo", send_counts, recv_counts, size_, context_->rank);
      !counts.ok()) {
    return counts;
  }
  const auto ranks = static_cast<size_t>(size_);
  // Gloo's alltoallv takes counts in elements of the buffer's type: bytes here, as in Alltoall.
  const size_t element = DataTypeSize(type);
  std::vector<int64_t> send_bytes(ranks);
  std::vector<int64_t> recv_bytes(ranks);
  size_t send_total = 0;
  size_t recv_total = 0;
  for (size_t j = 0; j < ranks; ++j) {
    send_bytes[j] = static_cast<int64_t>(send_counts[j] * element);
    recv_bytes[j] = static_cast<int64_t>(recv_counts[j] * element);
    send_total += send_counts[j] * element;
    recv_total += recv_counts[j] * element;
  }
  if (BuffersOverlap(send, send_total, recv, recv_total)) {
    return Status::Error("gloo: alltoallv: the send and receive buffers overlap on rank " +
                         std::to_string(context_->rank));
  }
  // A rank that sends or receives nothing still takes part; Gloo wants a buffer all the same.
  char unused = 0;
  char* input = send_total > 0 ? const_cast<char*>(static_cast<const char*>(send)) : &unused;
  char* output = recv_total > 0 ? static_cast<char*>(recv) : &unused;
  return Guarded("alltoallv", [&] {
    gloo::AlltoallvOptions options(context_);
    options.setInput(input, send_bytes);
    options.setOutput(output, recv_bytes);
    gloo::alltoallv(options);
  });
}

Status GlooBackend::Barrier() {
  return Guarded("barrier", [&] {
    gloo::BarrierOptions options(context_);
    gloo::barrier(options);
  });
}

Status GlooBackend::BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) {
  if (op != ReduceOp::kSum || (type != DataType::kFloat32 && type != DataType::kFloat64)) {
    return Status::Error("gloo: the baseline allreduce supports float32 and float64 with sum, not " +
                         std::string(DataTypeName(type)) + " with " + std::string(ReduceOpName(op)));
  }
  if (count == 0) return Status::Ok();
  return Guarded("baseline allreduce", [&] {
    gloo::AllreduceOptions options(context_);
    if (type == DataType::kFloat32) {
      options.setOutput(static_cast<float*>(buffer), count);
      options.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    } else {
      options.setOutput(static_cast<double*>(buffer), count);
      options.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<double>));
    }
    gloo::allreduce(options);
  });
}

}  // namespace hvdrun
