// libhvdrun-test-conflicting-gloo.so: another Gloo, as an upstream libtorch brings one into a
// process (it bundles its own Gloo and exports its gloo:: symbols). It defines the very gloo::
// functions libhvdrun's Gloo module calls, each of which says it was called and aborts: a rank
// whose Gloo calls bind here instead of to the module's libgloo.so.0 dies at its first one.
// For tests/e2e/gloo_isolation_rank.cc only.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/context.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include <cstdio>
#include <cstdlib>

namespace {

[[noreturn]] void Called(const char* name) {
  std::fprintf(stderr, "conflicting gloo symbol called: %s\n", name);
  std::fflush(stderr);
  std::abort();
}

}  // namespace

namespace gloo {

void allreduce(const AllreduceOptions& /*opts*/) { Called("gloo::allreduce"); }
void allgather(AllgatherOptions& /*opts*/) { Called("gloo::allgather"); }
void alltoall(AlltoallOptions& /*opts*/) { Called("gloo::alltoall"); }
void barrier(BarrierOptions& /*opts*/) { Called("gloo::barrier"); }
void broadcast(BroadcastOptions& /*opts*/) { Called("gloo::broadcast"); }

BarrierOptions::BarrierOptions(const std::shared_ptr<Context>& /*context*/) {
  Called("gloo::BarrierOptions::BarrierOptions");
}

std::unique_ptr<transport::Pair>& Context::getPair(int /*i*/) { Called("gloo::Context::getPair"); }
std::unique_ptr<transport::UnboundBuffer> Context::createUnboundBuffer(void* /*ptr*/, size_t /*size*/) {
  Called("gloo::Context::createUnboundBuffer");
}
void Context::setTimeout(std::chrono::milliseconds /*timeout*/) { Called("gloo::Context::setTimeout"); }
std::chrono::milliseconds Context::getTimeout() const { Called("gloo::Context::getTimeout"); }

namespace rendezvous {
void Context::connectFullMesh(Store& /*store*/, std::shared_ptr<transport::Device>& /*dev*/) {
  Called("gloo::rendezvous::Context::connectFullMesh");
}
}  // namespace rendezvous

namespace transport::tcp {
std::shared_ptr<transport::Device> CreateDevice(const struct attr& /*attr*/) {
  Called("gloo::transport::tcp::CreateDevice");
}
}  // namespace transport::tcp

}  // namespace gloo

// The number of gloo:: functions defined above, for the rank program's line (and its link: the
// program calls it, so that the linker keeps this library first among its dependencies).
extern "C" __attribute__((visibility("default"))) int hvdrun_test_conflicting_gloo_functions() { return 12; }
