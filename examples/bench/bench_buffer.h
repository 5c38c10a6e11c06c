// BenchBuffer: a benchmark's buffer in the memory the job's backend reduces: host memory, or device
// memory for the nccl backend (whose collectives take device pointers), on the calling thread's
// current device (SelectRankDevice), filled from and read back into host memory. hvdrun-bench's size
// sweep and its gradient replay use it.
#ifndef HVDRUN_EXAMPLES_BENCH_BENCH_BUFFER_H_
#define HVDRUN_EXAMPLES_BENCH_BENCH_BUFFER_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "hvdrun/runtime.h"
#include "hvdrun/status.h"

namespace hvdrun {

class BenchBuffer {
 public:
  // A buffer of `bytes`; on the device when `on_device` (an error where hvdrun-bench was built
  // without CUDA).
  static StatusOr<std::unique_ptr<BenchBuffer>> Allocate(bool on_device, size_t bytes);
  ~BenchBuffer();
  BenchBuffer(const BenchBuffer&) = delete;
  BenchBuffer& operator=(const BenchBuffer&) = delete;

  void* data() { return device_ != nullptr ? device_ : host_.data(); }
  // Copies as many bytes as the buffer holds from `host` into it.
  Status Upload(const void* host);
  // Copies the buffer's bytes into `host`.
  Status Download(void* host) const;

 private:
  explicit BenchBuffer(size_t bytes) : bytes_(bytes) {}

  size_t bytes_;
  std::vector<char> host_;
  void* device_ = nullptr;
};

// Makes the device the nccl backend uses for this rank (local_rank % devices) current on this
// thread, so that BenchBuffer allocates there.
Status SelectRankDevice(const Runtime& runtime);

}  // namespace hvdrun

#endif  // HVDRUN_EXAMPLES_BENCH_BENCH_BUFFER_H_
