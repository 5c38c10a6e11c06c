#include "runtime/elastic/membership.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/error_text.h"
#include "common/whole_number.h"
#include "hvdrun/error_kind.h"
#include "runtime/elastic/round_store.h"

namespace hvdrun {
namespace {

// How often re-initialization looks for its place.
constexpr std::chrono::milliseconds kPlacePoll{50};

// What the process knows of one worker: the round its Runtimes are in, and how many live.
struct WorkerState {
  int round = -1;  // none yet
  ElasticPlace place;
  int live = 0;
  bool ended = false;  // every Runtime of the round has been destroyed: the next waits for a newer one
};

std::mutex& RegistryMutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, WorkerState>& Registry() {
  static auto* workers = new std::map<std::string, WorkerState>();
  return *workers;
}

ElasticPlace PlaceOf(const RuntimeOptions& options) {
  return ElasticPlace{options.rank,
                      options.size,
                      options.local_rank,
                      options.local_size,
                      options.cross_rank,
                      options.cross_size,
                      ""};
}

struct RoundPlace {
  int round = 0;
  ElasticPlace place;
};

// Waits for the newest round after `after` that holds `worker_id`'s place (see the header).
StatusOr<RoundPlace> WaitForPlace(KeyValueStore& store, const std::string& worker_id, int after,
                                  std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int64_t newest_seen = after;
  Status last_error;
  while (true) {
    StatusOr<int64_t> newest = ReadNewestRound(store);
    if (!newest.ok()) last_error = newest.status();
    if (newest.ok() && newest.value() > after && newest.value() <= INT_MAX) {
      newest_seen = newest.value();
      const int round = static_cast<int>(newest.value());
      const std::string key = ElasticPlaceKey(round, worker_id);
      StatusOr<std::string> text = store.Get(key, std::chrono::milliseconds(0));
      if (text.ok()) {
        StatusOr<ElasticPlace> place = ParseElasticPlace(key, text.value());
        if (!place.ok()) return place.status();
        return RoundPlace{round, std::move(place).value()};
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string message = "elastic: worker '" + worker_id + "' got no place in a round after round " +
                            std::to_string(after) + " within " + DurationText(timeout) +
                            " (HVDRUN_ELASTIC_TIMEOUT_SECONDS; the newest round is " +
                            std::to_string(newest_seen) + ")";
      if (!last_error.ok()) message += "; the store said: " + last_error.message();
      return Status::Error(std::move(message));
    }
    std::this_thread::sleep_for(kPlacePoll);
  }
}

Status CheckElastic(const RuntimeOptions& options) {
  if (options.backend == BackendKind::kMpi) {
    return Status::Error(
        "Runtime::Init: MPI jobs are not elastic (HVDRUN_ELASTIC=1): run an elastic job with --gloo or "
        "--nccl");
  }
  if (options.elastic.worker_id.empty()) {
    return Status::Error("Runtime::Init: an elastic runtime needs its worker id (HVDRUN_WORKER_ID)");
  }
  if (options.elastic.round < 0) {
    return Status::Error("Runtime::Init: elastic round " + std::to_string(options.elastic.round) +
                         " is negative");
  }
  if (options.store == nullptr) return Status::Error("Runtime::Init: no store");
  return Status::Ok();
}

// The round and place of a worker's Runtime about to be created; counts it as live.
StatusOr<RoundPlace> TakePlace(const RuntimeOptions& options) {
  const std::string& worker_id = options.elastic.worker_id;
  int after = 0;
  {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    WorkerState& worker = Registry()[worker_id];
    if (worker.round < 0) {  // the worker's first Runtime: the place hvdrun started it in
      worker.round = options.elastic.round;
      worker.place = PlaceOf(options);
    }
    if (worker.live > 0 || !worker.ended) {
      ++worker.live;
      return RoundPlace{worker.round, worker.place};
    }
    after = worker.round;
  }
  StatusOr<RoundPlace> found =
      WaitForPlace(*options.store, worker_id, after, options.elastic.assignment_timeout);
  if (!found.ok()) return found.status();
  std::lock_guard<std::mutex> lock(RegistryMutex());
  WorkerState& worker = Registry()[worker_id];
  worker.round = found.value().round;
  worker.place = found.value().place;
  worker.ended = false;
  ++worker.live;
  return found;
}

void Release(const std::string& worker_id) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  WorkerState& worker = Registry()[worker_id];
  if (--worker.live == 0) worker.ended = true;
}

}  // namespace

std::string ElasticPlaceKey(int round, const std::string& worker_id) {
  return "elastic/" + std::to_string(round) + "/rank/" + worker_id;
}

StatusOr<ElasticPlace> ParseElasticPlace(const std::string& key, const std::string& text) {
  if (text == "removed") {
    return ErrorOfKind(ErrorKind::kRemoved,
                       "elastic: this worker has no place in the job's new round (" + key + " is 'removed')");
  }
  std::istringstream words(text);
  std::vector<std::string> fields;
  for (std::string word; words >> word;) fields.push_back(word);
  const auto malformed = [&key, &text] {
    return Status::Error(
        "elastic: " + key + " is '" + text +
        "', not 'RANK SIZE LOCAL_RANK LOCAL_SIZE CROSS_RANK CROSS_SIZE HOSTNAME' or 'removed'");
  };
  if (fields.size() != 7) return malformed();
  int numbers[6] = {};
  for (size_t i = 0; i < 6; ++i) {
    ParsedWholeNumber parsed = ParseWholeNumber(fields[i], 0, 1 << 24);
    if (!parsed.ok()) return malformed();
    numbers[i] = static_cast<int>(parsed.value);
  }
  ElasticPlace place{numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5], fields[6]};
  if (place.rank >= place.size || place.local_rank >= place.local_size ||
      place.cross_rank >= place.cross_size || place.size == 0) {
    return malformed();
  }
  return place;
}

StatusOr<std::unique_ptr<ElasticMembership>> ElasticMembership::Join(RuntimeOptions& options) {
  if (Status checked = CheckElastic(options); !checked.ok()) return checked;
  StatusOr<RoundPlace> taken = TakePlace(options);
  if (!taken.ok()) return taken.status();
  const RoundPlace& found = taken.value();
  StatusOr<int64_t> hosts_updated = options.store->Add(kElasticHostsUpdatedKey, 0);
  if (!hosts_updated.ok()) {
    Release(options.elastic.worker_id);
    return Status::Error("elastic: " + hosts_updated.status().message());
  }
  std::unique_ptr<ElasticMembership> membership(
      new ElasticMembership(options.store, options.elastic.worker_id, found.round, hosts_updated.value()));
  options.rank = found.place.rank;
  options.size = found.place.size;
  options.local_rank = found.place.local_rank;
  options.local_size = found.place.local_size;
  options.cross_rank = found.place.cross_rank;
  options.cross_size = found.place.cross_size;
  if (!found.place.hostname.empty()) options.timeline.host = found.place.hostname;
  options.elastic.round = found.round;
  options.store = std::make_shared<RoundStore>(options.store, found.round);
  return membership;
}

ElasticMembership::ElasticMembership(std::shared_ptr<KeyValueStore> job_store, std::string worker_id,
                                     int round, int64_t hosts_updated)
    : job_store_(std::move(job_store)),
      worker_id_(std::move(worker_id)),
      round_(round),
      hosts_updated_(hosts_updated) {}

ElasticMembership::~ElasticMembership() {
  watch_.reset();
  Release(worker_id_);
}

void ElasticMembership::Watch(const OpenSocketTable& before, const OpenSocketTable& after) {
  watch_ = std::make_unique<RoundWatch>(job_store_, round_, hosts_updated_, before, after);
}

StatusOr<bool> ElasticMembership::HostsUpdated() const {
  StatusOr<int64_t> now = job_store_->Add(kElasticHostsUpdatedKey, 0);
  if (!now.ok()) return Status::Error("elastic: " + now.status().message());
  return now.value() != hosts_updated_;
}

}  // namespace hvdrun
