#include "examples/trainer/data_parallel_group.h"

#include <algorithm>

#include <ATen/core/Tensor.h>
#include <ATen/ops/tensor.h>

namespace hvdrun::trainer {

StatusOr<std::unique_ptr<DataParallelGroup>> DataParallelGroup::FromEnvironment(
    const std::function<const char*(const char*)>& lookup,
    const std::function<void(RuntimeOptions&)>& adjust) {
  auto group = std::make_unique<DataParallelGroup>();
  if (!Runtime::LaunchedByHvdrun(lookup)) return group;
  // A rank that hvdrun started without a backend is told that first.
  StatusOr<BackendKind> backend = Runtime::BackendFromEnvironment(lookup);
  if (!backend.ok()) return backend.status();
  // Gradients are named and fused (CollectiveOrder::kNegotiated) on every backend, NCCL's in device
  // memory.
  StatusOr<std::unique_ptr<Runtime>> runtime =
      Runtime::InitFromEnvironment(lookup, CollectiveOrder::kNegotiated, adjust);
  if (!runtime.ok()) return runtime.status();
  group->owned_ = std::move(runtime).value();
  group->runtime_ = group->owned_.get();
  return group;
}

std::string DataParallelGroup::backend_name() const {
  return runtime_ != nullptr ? std::string(BackendName(runtime_->backend())) : "none";
}

Status DataParallelGroup::SumAcrossRanks(std::vector<double>& values) {
  if (runtime_ == nullptr || values.empty()) return Status::Ok();
  if (staging_gpu_ < 0) {
    return runtime_->Allreduce(values.data(), values.data(), values.size(), DataType::kFloat64,
                               ReduceOp::kSum);
  }
  at::Tensor staged =
      at::tensor(values, at::kDouble).to(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(staging_gpu_)));
  Status status = runtime_->Allreduce(staged.data_ptr(), staged.data_ptr(), values.size(), DataType::kFloat64,
                                      ReduceOp::kSum);
  if (!status.ok()) return status;
  at::Tensor host = staged.to(at::kCPU);
  std::copy(host.data_ptr<double>(), host.data_ptr<double>() + host.numel(), values.begin());
  return Status::Ok();
}

Status DataParallelGroup::SendReport(const std::string& json) {
  if (runtime_ == nullptr) return Status::Ok();
  return runtime_->SendReport(json);
}

}  // namespace hvdrun::trainer
