// RoundStore: the job's store as a Runtime of an elastic job's round r sees it (docs/elastic.md):
// every key under "r<r>/", so that processes of different rounds never meet (Gloo contexts,
// shared-memory handovers, negotiation, arrivals), while reports and timeline pieces go to the job's
// collector unchanged. A wait for keys (Get, Wait) ends early, with ErrorKind::kRecoverable, once
// the job's "elastic/round" names a later round: nobody of round r will come any more.
//
// Thread-safe as the store it wraps.
#ifndef HVDRUN_RUNTIME_ELASTIC_ROUND_STORE_H_
#define HVDRUN_RUNTIME_ELASTIC_ROUND_STORE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hvdrun/key_value_store.h"
#include "hvdrun/status.h"

namespace hvdrun {

// The key hvdrun writes the job's newest round under (a decimal number).
inline constexpr const char* kElasticRoundKey = "elastic/round";
// The counter hvdrun adds 1 to when it has found hosts whose ranks wait to join, or a host left
// discovery: the running ranks re-form at their next commit.
inline constexpr const char* kElasticHostsUpdatedKey = "elastic/hosts_updated";

// The job's newest round as the store says now ("elastic/round"; 0 before hvdrun wrote it).
// Does not wait.
StatusOr<int64_t> ReadNewestRound(KeyValueStore& job_store);

class RoundStore final : public KeyValueStore {
 public:
  RoundStore(std::shared_ptr<KeyValueStore> job_store, int round);

  Status Set(const std::string& key, const std::string& value) override;
  StatusOr<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) override;
  Status Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  StatusOr<int64_t> Add(const std::string& key, int64_t delta) override;
  StatusOr<std::string> CompareAndSet(const std::string& key, const std::string& expected,
                                      const std::string& desired) override;
  Status Delete(const std::string& key) override;
  Status SendReport(int rank, const std::string& json) override;
  Status SendTimelinePiece(int rank, uint64_t offset, const std::string& data) override;

 private:
  // OK while the job is still in this round (or the store cannot say); else the recoverable error.
  Status StillCurrent() const;

  const std::shared_ptr<KeyValueStore> job_store_;
  const int round_;
  const std::string prefix_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_ELASTIC_ROUND_STORE_H_
