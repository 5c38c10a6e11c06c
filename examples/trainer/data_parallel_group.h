// DataParallelGroup: the ranks that train one model together, as one of them sees it.
//
// Under hvdrun (HVDRUN_RANK in the environment) the group owns this rank's libhvdrun Runtime and
// reaches the other ranks through it. Run directly, without hvdrun, it is a group of one rank with
// no runtime: every collective is then the identity and reports go nowhere, so that a model can be
// described or tried quickly on one machine. Not thread-safe; the training thread owns it.
#ifndef HVDRUN_EXAMPLES_TRAINER_DATA_PARALLEL_GROUP_H_
#define HVDRUN_EXAMPLES_TRAINER_DATA_PARALLEL_GROUP_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hvdrun/runtime.h"
#include "hvdrun/status.h"

namespace hvdrun::trainer {

class DataParallelGroup {
 public:
  // The group this process belongs to, from its environment (`lookup` is std::getenv in the
  // program). Not launched by hvdrun: a group of one. Else Runtime::InitFromEnvironment, whose
  // error is returned as it is; a rank that hvdrun started without a backend (no HVDRUN_BACKEND)
  // is told to run hvdrun with --gloo, --mpi or --nccl.
  // `adjust` changes the runtime's options before it starts (the trainer's own flags).
  static StatusOr<std::unique_ptr<DataParallelGroup>> FromEnvironment(
      const std::function<const char*(const char*)>& lookup,
      const std::function<void(RuntimeOptions&)>& adjust = nullptr);

  // A group of one rank, without runtime.
  DataParallelGroup() = default;
  // A group over `runtime`, which must outlive the group (tests run ranks as threads this way).
  explicit DataParallelGroup(Runtime* runtime) : runtime_(runtime) {}
  DataParallelGroup(const DataParallelGroup&) = delete;
  DataParallelGroup& operator=(const DataParallelGroup&) = delete;

  // Null in a group of one without hvdrun.
  Runtime* runtime() const { return runtime_; }
  int rank() const { return runtime_ != nullptr ? runtime_->rank() : 0; }
  int size() const { return runtime_ != nullptr ? runtime_->size() : 1; }
  int local_rank() const { return runtime_ != nullptr ? runtime_->local_rank() : 0; }
  int local_size() const { return runtime_ != nullptr ? runtime_->local_size() : 1; }
  // "gloo", "mpi" or "nccl"; "none" without runtime.
  std::string backend_name() const;

  // For a backend that reduces device memory only (nccl): SumAcrossRanks stages its values
  // through GPU `cuda_device`. Without it, values are reduced from host memory.
  void StageThroughGpu(int cuda_device) { staging_gpu_ = cuda_device; }

  // Replaces each of `values` by its sum over the group's ranks (one float64 allreduce; every rank
  // must call it with as many values).
  Status SumAcrossRanks(std::vector<double>& values);

  // Sends this rank's report to hvdrun's collector (Runtime::SendReport); nothing without runtime.
  Status SendReport(const std::string& json);

 private:
  std::unique_ptr<Runtime> owned_;
  Runtime* runtime_ = nullptr;
  int staging_gpu_ = -1;  // -1: none
};

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_DATA_PARALLEL_GROUP_H_
