#include "runtime/process_set_table.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "runtime/runtime_impl.h"
#include "runtime/shm/prefixed_store.h"

namespace hvdrun {
namespace {

// A PrefixedStore that keeps the job's store alive as long as the set's engine holds it.
class SetStore final : public PrefixedStore {
 public:
  SetStore(std::shared_ptr<KeyValueStore> job, std::string prefix)
      : PrefixedStore(*job, std::move(prefix)), job_(std::move(job)) {}

 private:
  std::shared_ptr<KeyValueStore> job_;
};

std::string RanksText(const std::vector<int>& ranks) {
  std::string text;
  for (int rank : ranks) {
    if (!text.empty()) text += ',';
    text += std::to_string(rank);
  }
  return text;
}

}  // namespace

void ProcessSet::Track(const CollectiveHandle& handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  submitted_.erase(std::remove_if(submitted_.begin(), submitted_.end(),
                                  [](const CollectiveHandle& done) { return done.Ready(); }),
                   submitted_.end());
  submitted_.push_back(handle);
}

size_t ProcessSet::Pending() {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<size_t>(std::count_if(submitted_.begin(), submitted_.end(),
                                           [](const CollectiveHandle& handle) { return !handle.Ready(); }));
}

std::string ProcessSetText(int id, const std::vector<int>& ranks) {
  return "process set " + std::to_string(id) + " (ranks " + RanksText(ranks) + ")";
}

ProcessSetTable::ProcessSetTable(const RuntimeOptions& job, std::string scope)
    : job_(job), scope_(std::move(scope)) {}

ProcessSetTable::~ProcessSetTable() {
  std::map<int, std::shared_ptr<ProcessSet>> sets;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    sets.swap(sets_);
  }
  // Later sets first, the reverse of their creation, as every rank does.
  while (!sets.empty()) sets.erase(std::prev(sets.end()));
}

StatusOr<RuntimeOptions> ProcessSetTable::SetOptions(const ProcessSet& set) const {
  RuntimeOptions options = job_;
  options.rank = set.rank;
  options.size = static_cast<int>(set.ranks.size());
  options.store = std::make_shared<SetStore>(job_.store, scope_ + "set/" + std::to_string(set.id) + "/");
  options.collective_thread_cpu = -1;
  // The members' hosts: local ranks are the members on this rank's host, cross ranks the hosts.
  const std::string host = job_.host_address + " " + job_.timeline.host;
  Status status = options.store->Set("hosts/" + std::to_string(set.rank), host);
  if (!status.ok()) return status;
  std::vector<std::string> hosts;
  for (size_t member = 0; member < set.ranks.size(); ++member) {
    StatusOr<std::string> other = options.store->Get("hosts/" + std::to_string(member), job_.timeout);
    if (!other.ok()) {
      return Status::Error(ProcessSetText(set.id, set.ranks) + ": job rank " +
                           std::to_string(set.ranks[member]) +
                           " did not arrive: " + other.status().message());
    }
    hosts.push_back(other.value());
  }
  std::vector<std::string> distinct;
  options.local_rank = 0;
  options.local_size = 0;
  for (size_t member = 0; member < hosts.size(); ++member) {
    if (std::find(distinct.begin(), distinct.end(), hosts[member]) == distinct.end()) {
      distinct.push_back(hosts[member]);
    }
    if (hosts[member] != host) continue;
    if (static_cast<int>(member) < set.rank) ++options.local_rank;
    ++options.local_size;
  }
  options.cross_size = static_cast<int>(distinct.size());
  options.cross_rank = static_cast<int>(std::find(distinct.begin(), distinct.end(), host) - distinct.begin());
  return options;
}

StatusOr<int> ProcessSetTable::Add(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  if (ranks.empty()) return Status::Error("AddProcessSet: a process set needs at least one rank");
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < 0 || ranks[i] >= job_.size) {
      return Status::Error("AddProcessSet: rank " + std::to_string(ranks[i]) +
                           " is out of range for a job of " + std::to_string(job_.size) + " ranks");
    }
    if (i > 0 && ranks[i] == ranks[i - 1]) {
      return Status::Error("AddProcessSet: rank " + std::to_string(ranks[i]) + " is given twice");
    }
  }
  auto set = std::make_shared<ProcessSet>();
  set->ranks = std::move(ranks);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    set->id = next_id_++;
  }
  const auto mine = std::find(set->ranks.begin(), set->ranks.end(), job_.rank);
  if (mine != set->ranks.end()) {
    set->rank = static_cast<int>(mine - set->ranks.begin());
    StatusOr<RuntimeOptions> options = SetOptions(*set);
    if (!options.ok()) return options.status();
    ProcessSetPlace place;
    place.id = set->id;
    place.members = set->ranks;
    place.job_local_rank = job_.local_rank;
    auto engine = std::make_shared<RuntimeImpl>(std::move(options).value(), std::move(place));
    if (Status started = engine->Start(); !started.ok()) {
      return Status::Error(ProcessSetText(set->id, set->ranks) + ": " + started.message());
    }
    set->engine = std::move(engine);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  sets_[set->id] = set;
  return set->id;
}

Status ProcessSetTable::Remove(int id) {
  std::shared_ptr<ProcessSet> set;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = sets_.find(id);
    if (found == sets_.end()) {
      return Status::Error(id == 0 ? "RemoveProcessSet: the global process set (0) cannot be removed"
                                   : "RemoveProcessSet: no process set " + std::to_string(id));
    }
    if (const size_t pending = found->second->Pending(); pending > 0) {
      return Status::Error("RemoveProcessSet: " + ProcessSetText(id, found->second->ranks) + " has " +
                           std::to_string(pending) + " collective(s) pending on rank " +
                           std::to_string(job_.rank) + "; wait for them first");
    }
    set = found->second;
    sets_.erase(found);
  }
  // The engine drains and stops here, unless a caller still holds the set for a call.
  set.reset();
  return Status::Ok();
}

StatusOr<std::shared_ptr<ProcessSet>> ProcessSetTable::Find(int id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = sets_.find(id);
  if (found == sets_.end()) return Status::Error("no process set " + std::to_string(id) + " is registered");
  return found->second;
}

StatusOr<std::shared_ptr<ProcessSet>> ProcessSetTable::Member(int id, const std::string& call) const {
  StatusOr<std::shared_ptr<ProcessSet>> set = Find(id);
  if (!set.ok()) return Status::Error(call + ": " + set.status().message());
  if (set.value()->engine == nullptr) {
    return Status::Error(call + ": rank " + std::to_string(job_.rank) + " is not in " +
                         ProcessSetText(id, set.value()->ranks));
  }
  return set;
}

StatusOr<SetEngine> ProcessSetTable::Engine(RuntimeImpl& global, int id, const std::string& call) const {
  if (id == 0) return SetEngine{&global, nullptr};
  StatusOr<std::shared_ptr<ProcessSet>> set = Member(id, call);
  if (!set.ok()) return set.status();
  RuntimeImpl* engine = set.value()->engine.get();
  return SetEngine{engine, std::move(set).value()};
}

std::vector<int> ProcessSetTable::Ids() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<int> ids;
  for (const auto& [id, set] : sets_) ids.push_back(id);
  return ids;
}

nlohmann::json ProcessSetTable::Report() const {
  std::lock_guard<std::mutex> lock(mutex_);
  nlohmann::json report = nlohmann::json::array();
  for (const auto& [id, set] : sets_) {
    nlohmann::json entry = {{"id", id}, {"ranks", set->ranks}};
    if (set->engine != nullptr) {
      nlohmann::json library = set->engine->LibraryReport();
      if (!library.is_null()) entry["libhvdrun"] = std::move(library);
    }
    report.push_back(std::move(entry));
  }
  return report;
}

}  // namespace hvdrun
