// CollectiveHandle: what an asynchronous collective returns (Runtime's ...Async calls); and
// AllgatherResult and AlltoallResult, what the handles of collectives whose result size only the
// ranks together know fill.
//
// A handle is a small value: its copies share one collective's state, and any of them may be waited
// on from any thread, any number of times. A handle must not outlive its Runtime. A result passed to
// a call must stay valid, and must not be read, until that call's handle has completed.
#ifndef HVDRUN_COLLECTIVE_HANDLE_H_
#define HVDRUN_COLLECTIVE_HANDLE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "hvdrun/export.h"
#include "hvdrun/status.h"

namespace hvdrun {

// The result of an asynchronous collective. Wait() blocks until it has run and returns its Status;
// it may be called more than once. A handle must not outlive its Runtime.
class HVDRUN_EXPORT CollectiveHandle {
 public:
  CollectiveHandle() = default;
  Status Wait();
  // For device memory (NCCL, negotiated): returns once the collective is queued on the device and
  // `cuda_stream` (a cudaStream_t; null: the default stream) has been made to wait for its end, so
  // that work queued on that stream afterwards sees the result, while the host goes on at once (as
  // Horovod's async completion). Other streams and the host see it after Wait(). A failure the device
  // meets later breaks the Runtime: a later call returns it. Otherwise (host backends, call order, a
  // collective that has already completed) the same as Wait().
  Status WaitOnStream(void* cuda_stream);
  bool Ready() const;

  struct State;
  explicit CollectiveHandle(std::shared_ptr<State> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<State> state_;
};

// What an allgather whose ranks give different counts leaves on each rank: every rank's elements,
// back to back in rank order, and how many came from each rank.
struct AllgatherResult {
  std::vector<std::byte> data;
  std::vector<uint64_t> counts;
};

// What an alltoall leaves on each rank: the elements every rank sent this one, back to back in rank
// order, and how many came from each rank.
using AlltoallResult = AllgatherResult;

}  // namespace hvdrun

#endif  // HVDRUN_COLLECTIVE_HANDLE_H_
