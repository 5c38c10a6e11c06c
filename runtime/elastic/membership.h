// ElasticMembership: an elastic worker's place in its job's current round (RuntimeOptions::elastic,
// docs/elastic.md, and the contract with hvdrun's driver in it).
//
// Each Runtime of an elastic worker holds one while it lives. The process keeps, per worker id, the
// round its Runtimes are in and how many of them live, so that:
//   - the worker's first Runtime takes the round and place its options give (hvdrun's HVDRUN_ROUND
//     and HVDRUN_RANK...);
//   - a Runtime created while another of the worker's lives (a --nccl rank's host runtime beside its
//     device runtime) joins the same round and place;
//   - a Runtime created after all of them have been destroyed (re-initialization) waits until the
//     job's "elastic/round" names a round newer than the last one that holds
//     "elastic/<round>/rank/<worker_id>", and takes its place from that key: "RANK SIZE LOCAL_RANK
//     LOCAL_SIZE CROSS_RANK CROSS_SIZE HOSTNAME", or "removed" (ErrorKind::kRemoved). It gives up
//     after ElasticOptions::assignment_timeout with a one-line error.
// Join also puts the options' store under the round's prefix (RoundStore).
//
// Thread-safe: Runtimes of different workers (threads as ranks in tests) may join at once.
#ifndef HVDRUN_RUNTIME_ELASTIC_MEMBERSHIP_H_
#define HVDRUN_RUNTIME_ELASTIC_MEMBERSHIP_H_

#include <cstdint>
#include <memory>
#include <string>

#include "hvdrun/key_value_store.h"
#include "hvdrun/options.h"
#include "hvdrun/status.h"
#include "runtime/elastic/round_watch.h"

namespace hvdrun {

// A worker's place in one round, as hvdrun writes it.
struct ElasticPlace {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  int cross_rank = 0;
  int cross_size = 1;
  std::string hostname;
};

// `text` of key `key` as a place; "removed" is ErrorKind::kRemoved; anything else malformed names
// the key and the text.
StatusOr<ElasticPlace> ParseElasticPlace(const std::string& key, const std::string& text);
// The key of `worker_id`'s place in `round`.
std::string ElasticPlaceKey(int round, const std::string& worker_id);

class ElasticMembership {
 public:
  // For options.elastic.enabled: refuses MPI and an empty worker id, finds the round and place
  // (see above), writes the place into `options`' rank fields and puts options.store under the
  // round's prefix.
  static StatusOr<std::unique_ptr<ElasticMembership>> Join(RuntimeOptions& options);
  ~ElasticMembership();
  ElasticMembership(const ElasticMembership&) = delete;
  ElasticMembership& operator=(const ElasticMembership&) = delete;

  int round() const { return round_; }
  // Whether the job's "elastic/hosts_updated" counter differs from its value when this Runtime
  // joined: hvdrun has found hosts whose ranks wait to join. Does not wait.
  StatusOr<bool> HostsUpdated() const;

  // Starts the round's watch (round_watch.h) on the sockets of `after` that `before` lacks: those
  // the runtime opened while it started. StopWatching ends it; the runtime calls it before its
  // backends close those sockets.
  void Watch(const OpenSocketTable& before, const OpenSocketTable& after);
  // Adds to the watch the sockets of `after` that `before` lacks: those a process set's engine
  // opened while it started (RoundWatch::Add). Nothing once StopWatching has run.
  void WatchMore(const OpenSocketTable& before, const OpenSocketTable& after) {
    if (watch_ != nullptr) watch_->Add(before, after);
  }
  void StopWatching() { watch_.reset(); }

 private:
  ElasticMembership(std::shared_ptr<KeyValueStore> job_store, std::string worker_id, int round,
                    int64_t hosts_updated);

  const std::shared_ptr<KeyValueStore> job_store_;
  const std::string worker_id_;
  const int round_;
  const int64_t hosts_updated_;
  std::unique_ptr<RoundWatch> watch_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_ELASTIC_MEMBERSHIP_H_
