// The arrival check every Runtime makes before it creates its backend: each rank announces itself
// in the job's key-value store and waits for all the others, so that a rank that never started is
// reported by number ("rendezvous: ranks 2, 3 of 4 did not arrive within 60 s") instead of as a
// backend connection timeout.
#ifndef HVDRUN_RUNTIME_ARRIVAL_CHECK_H_
#define HVDRUN_RUNTIME_ARRIVAL_CHECK_H_

#include <chrono>
#include <string>

#include "hvdrun/key_value_store.h"
#include "hvdrun/status.h"

namespace hvdrun {

// Sets "<scope>arrived/<rank>" and waits up to `timeout` for the keys of ranks 0..size-1.
// `scope` separates successive Runtimes of one job ("runtime/3/"). Blocking; thread-safe as the
// store is.
Status CheckArrival(KeyValueStore& store, const std::string& scope, int rank, int size,
                    std::chrono::milliseconds timeout);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_ARRIVAL_CHECK_H_
