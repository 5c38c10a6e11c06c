// NewInMemoryStore: a KeyValueStore held in this process's memory, for tests (ranks as threads)
// and for single-process jobs.
//
// The store's rules and error lines are those of hvdrun's rendezvous service (one KeyValueTable,
// common/protocol/key_value_table.h, answers both), each error line beginning with "store: ". Values are
// arbitrary bytes. Keys are not scoped: share one store per job. SendReport keeps a report under
// the key "report/<rank>" (KeyValueStore's default).
//
// Thread-safe: every method may be called from any thread. Get and Wait block on a condition
// variable until the keys appear or the timeout passes.
//
// Only this function is declared here, so that the header stays within C++17 for the trainer's
// tests (examples/trainer/, built as C++17 for libtorch), which reach it through runtime/test_job.h.
#ifndef HVDRUN_RUNTIME_IN_MEMORY_STORE_H_
#define HVDRUN_RUNTIME_IN_MEMORY_STORE_H_

#include <memory>

#include "hvdrun/key_value_store.h"

namespace hvdrun {

std::shared_ptr<KeyValueStore> NewInMemoryStore();

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_IN_MEMORY_STORE_H_
