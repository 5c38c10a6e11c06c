// RankJoin: this rank's part in Horovod's join (Runtime::Join), on the negotiated engine's collective
// thread. The rank announces its join once everything it submitted before has completed; from then
// until every rank has joined (the readiness table counts it as having every allreduce the others
// submit), it runs each such allreduce, fused or not, with zeros of the announced type and count in
// its place (stand-ins): an average is still divided by every rank (Horovod's rule), a minimum or
// maximum sees the zeros.
//
// Not thread-safe: the collective thread owns it.
#ifndef HVDRUN_RUNTIME_NEGOTIATION_RANK_JOIN_H_
#define HVDRUN_RUNTIME_NEGOTIATION_RANK_JOIN_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "hvdrun/status.h"
#include "runtime/backend.h"
#include "runtime/negotiation/negotiation_message.h"
#include "runtime/negotiation/pending_entries.h"
#include "runtime/request/tensor_request.h"

namespace hvdrun {

class RankJoin {
 public:
  // The join's announcement, once: when this rank asked to join (`joining`: its count of unnamed
  // calls) and has nothing pending; std::nullopt otherwise.
  std::optional<Announcement> Announce(const std::optional<uint64_t>& joining, bool nothing_pending);
  // Adds to `pending`, for each ready allreduce this rank has not submitted, a stand-in of zeros in
  // the data backend's `memory`. Fails when that memory cannot be had.
  static Status AddStandIns(BackendMemory& memory, const std::vector<TensorRequest>& ready,
                            PendingEntries& pending);
  // Every rank has joined: a later Join announces again.
  void Done() { announced_ = false; }

 private:
  bool announced_ = false;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_NEGOTIATION_RANK_JOIN_H_
