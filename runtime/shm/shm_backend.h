// ShmBackend: a Backend whose allreduces run through the host's shared-memory segment
// (runtime/shm/shm_allreduce.h) and whose other collectives go to the job's backend (Gloo, MPI).
// The Runtime puts it in front of the backend when every rank of the job is on one host and the
// backend reduces host memory (SharedMemoryServes); everything above it, the negotiated engine, its
// fusion and compression, sees one Backend. BaselineAllreduce stays the backend library's own.
//
// An allreduce that fails in the segment (a local rank did not arrive within the stall shutdown
// time, or its process is gone) abandons the backends behind it (Backend::Abandon): the ranks can no
// longer all meet to end the job's MPI.
//
// As every Backend: created, used and destroyed by one collective thread.
#ifndef HVDRUN_RUNTIME_SHM_SHM_BACKEND_H_
#define HVDRUN_RUNTIME_SHM_SHM_BACKEND_H_

#include <memory>
#include <string>

#include "hvdrun/key_value_store.h"
#include "hvdrun/options.h"
#include "hvdrun/status.h"
#include "runtime/backend.h"
#include "runtime/shm/shm_allreduce.h"
#include "runtime/shm/shm_segment.h"

namespace hvdrun {

// Whether a Runtime with `options` reduces through shared memory: RuntimeOptions::shared_memory
// on, a host-memory backend (not NCCL), and more than one rank, all on one host.
bool SharedMemoryServes(const RuntimeOptions& options);
// Whether the options ask for the hierarchical allreduce and allow it: hierarchical_allreduce and
// shared_memory on, over Gloo, on several hosts. The same on every rank of a job.
bool HierarchicalAsked(const RuntimeOptions& options);
// Whether the job reduces hierarchically: HierarchicalAsked, and every host has the same number of
// ranks, more than one. Only the ranks together know the second: when asked, a collective of the
// job's ranks, which publish their local_size through `store` under `scope` and read every rank's.
StatusOr<bool> AgreeOnHierarchical(const RuntimeOptions& options, KeyValueStore& store,
                                   const std::string& scope);

class ShmBackend;

// Opens the host's segment (a collective of its local ranks, through `store` under `scope`) and
// puts a ShmBackend in front of `backend`; `hierarchical` (AgreeOnHierarchical), also creates the
// backend among the same local rank of every host (bootstrapped through `store` under `scope`).
StatusOr<std::unique_ptr<ShmBackend>> WithSharedMemory(std::unique_ptr<Backend> backend,
                                                       const RuntimeOptions& options, KeyValueStore& store,
                                                       const std::string& scope, bool hierarchical);

class ShmBackend : public Backend {
 public:
  // `divisor`: what an average divides the sum by (the job's size). `cross` and its `cross_store`:
  // the hierarchical allreduce's backend among the hosts, or null.
  ShmBackend(std::unique_ptr<Backend> backend, std::unique_ptr<ShmSegment> segment, int divisor,
             std::unique_ptr<KeyValueStore> cross_store = nullptr, std::unique_ptr<Backend> cross = nullptr);

  Status Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) override;
  Status Broadcast(void* buffer, size_t count, DataType type, int root) override;
  Status Allgather(const void* send, void* recv, size_t count, DataType type) override;
  Status Alltoall(const void* send, void* recv, size_t count, DataType type) override;
  Status Barrier() override;
  Status BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) override;
  // With a cross-host backend: whether allreduces run hierarchically (true, from the start) or as
  // the flat ring of the job's backend over every rank, as without the hierarchical allreduce (what
  // the autotuner tries against it). Every rank must switch at the same point of the collective
  // order; without a cross-host backend it changes nothing.
  void set_hierarchical(bool on) { hierarchical_ = on; }
  // The local ranks an allreduce's barrier waits for (ShmSegment::Missing), else the backend's.
  std::string Progress() override;
  // Passed on to the job's backend and the cross-host one.
  void Abandon() override;

 private:
  // Destroyed in reverse order: the job's backend while the segment is still mapped, the cross-host
  // backend before the store it bootstrapped through.
  std::unique_ptr<KeyValueStore> cross_store_;
  std::unique_ptr<Backend> cross_;
  ShmAllreduce allreduce_;
  std::unique_ptr<Backend> backend_;
  bool hierarchical_ = true;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_SHM_SHM_BACKEND_H_
