#include "runtime/request/scale_factors.h"

#include "runtime/reduction_kernels.h"

namespace hvdrun {

Status ScaleValues(BackendMemory& memory, void* values, size_t count, DataType type, double factor) {
  if (factor == 1.0 || count == 0) return Status::Ok();
  if (memory.on_device()) return memory.Scale(values, count, type, factor);
  ScaleBy(type, values, count, factor);
  return Status::Ok();
}

}  // namespace hvdrun
