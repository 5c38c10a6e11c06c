// ProcessSetTable: a Runtime's process sets (Horovod's), each a subset of the job's ranks with an
// engine of its own.
//
// Contract. A process set is a whole RuntimeImpl over its member ranks: its own collective thread,
// negotiation (or call-order queue), response cache, fusion buffer, compression state and backend
// group, bootstrapped through the job's store under a prefix of its own (the Runtime's scope, then
// "set/<id>/"): a Gloo context over the members, an MPI communicator made by MPI_Comm_create_group
// (a collective of the members only), an NCCL communicator from a unique id exchanged under the
// prefix, and the shared-memory segment of the members on each host. Set ranks are the members'
// places in the ascending list of their job ranks. Because every set has its own thread and its own
// backend group, collectives of different sets run concurrently and never wait for one another;
// within a set, the rules of its CollectiveOrder hold among its members. The global set, id 0, is
// the Runtime's own engine and is not in the table.
//
// Add and Remove must be made by every rank of the job in the same order (as Horovod asks): ids are
// given in that order, starting at 1, and never reused. Add on a member blocks until every member has
// arrived (RuntimeOptions::timeout); on other ranks it only records the set. Remove refuses a set with
// collectives still pending on this rank (submitted through Track and not completed); otherwise the
// members' engines drain and shut their backends down. A call on a set this rank is not in is a
// one-line error naming the set, its ranks and this rank; it does not break anything.
//
// Thread-safe: every method may be called from any thread. An engine stays alive while a caller holds
// its Member (a set removed meanwhile finishes that caller's call first).
#ifndef HVDRUN_RUNTIME_PROCESS_SET_TABLE_H_
#define HVDRUN_RUNTIME_PROCESS_SET_TABLE_H_

#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hvdrun/collective_handle.h"
#include "hvdrun/options.h"
#include "hvdrun/status.h"

namespace hvdrun {

class RuntimeImpl;

// One set as this rank sees it.
struct ProcessSet {
  int id = 0;
  std::vector<int> ranks;               // job ranks, ascending
  int rank = -1;                        // this rank's place among them; -1: not a member
  std::shared_ptr<RuntimeImpl> engine;  // null unless a member

  // The members' collectives not yet completed on this rank (Remove refuses while there are any).
  void Track(const CollectiveHandle& handle);
  size_t Pending();

 private:
  std::mutex mutex_;
  std::vector<CollectiveHandle> submitted_;  // GUARDED_BY(mutex_)
};

// The engine a call runs on: the Runtime's own for the global set, else a set's, held for the call.
struct SetEngine {
  RuntimeImpl* impl = nullptr;
  std::shared_ptr<ProcessSet> set;  // null for the global set
  // `handle`, recorded as pending in the set (for Remove).
  CollectiveHandle Track(CollectiveHandle handle) const {
    if (set != nullptr) set->Track(handle);
    return handle;
  }
  RuntimeImpl* operator->() const { return impl; }
};

// "process set 2 (ranks 0,1)".
std::string ProcessSetText(int id, const std::vector<int>& ranks);

class ProcessSetTable {
 public:
  // `job`: the Runtime's options; `scope`: the Runtime's own place in the job's store, unique to it.
  ProcessSetTable(const RuntimeOptions& job, std::string scope);
  // Removes every set (their engines drain first).
  ~ProcessSetTable();
  ProcessSetTable(const ProcessSetTable&) = delete;
  ProcessSetTable& operator=(const ProcessSetTable&) = delete;

  // Registers a set of `ranks` (job ranks in any order, no repeats) and returns its id; a member
  // starts its engine. Errors: a rank out of range or repeated, an empty set, a backend error.
  StatusOr<int> Add(std::vector<int> ranks);
  Status Remove(int id);
  // The set `id` if this rank is a member: its error names the call, the set and this rank.
  StatusOr<std::shared_ptr<ProcessSet>> Member(int id, const std::string& call) const;
  // The engine of `id` for a call named `call`: `global` for 0, else Member's.
  StatusOr<SetEngine> Engine(RuntimeImpl& global, int id, const std::string& call) const;
  // The set `id`, member or not; an error for an id that is not registered.
  StatusOr<std::shared_ptr<ProcessSet>> Find(int id) const;
  // Every registered set's id, ranks and, where this rank is a member, its engine's report.
  nlohmann::json Report() const;
  std::vector<int> Ids() const;

 private:
  // The options of the engine for `set`: the set's rank, size, hosts, and a prefixed store.
  StatusOr<RuntimeOptions> SetOptions(const ProcessSet& set) const;

  const RuntimeOptions& job_;
  const std::string scope_;
  mutable std::mutex mutex_;
  int next_id_ = 1;                                  // GUARDED_BY(mutex_)
  std::map<int, std::shared_ptr<ProcessSet>> sets_;  // GUARDED_BY(mutex_)
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_PROCESS_SET_TABLE_H_
