// KeyValueStore: the job's key-value store, which ranks bootstrap their backends through.
//
// In a job it is hvdrun's rendezvous service, reached over TCP (RendezvousClient), which also
// collects the ranks' reports; in tests it can be an in-memory store shared by threads
// (NewInMemoryStore). Keys are scoped to one job by the
// implementation. Implementations are thread-safe: any method may be called from any thread.
#ifndef HVDRUN_KEY_VALUE_STORE_H_
#define HVDRUN_KEY_VALUE_STORE_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "hvdrun/export.h"
#include "hvdrun/status.h"

namespace hvdrun {

class HVDRUN_EXPORT KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;

  virtual Status Set(const std::string& key, const std::string& value) = 0;
  // Waits until `key` exists (up to `timeout`) and returns its value. A timeout is an error that
  // names the key.
  virtual StatusOr<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) = 0;
  // Waits until every key exists. A timeout is an error that names the keys still missing.
  virtual Status Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  // Adds `delta` to the integer at `key` (0 when absent) and returns the new value.
  virtual StatusOr<int64_t> Add(const std::string& key, int64_t delta) = 0;
  // Sets `key` to `desired` if its value is `expected` (absent counts as equal to an empty
  // `expected`); returns the value now stored.
  virtual StatusOr<std::string> CompareAndSet(const std::string& key, const std::string& expected,
                                              const std::string& desired) = 0;
  virtual Status Delete(const std::string& key) = 0;

  // Hands rank `rank`'s end-of-run report (a JSON text, docs/results.md) to the job's collector.
  // hvdrun's rendezvous service keeps it for the launcher; this default stores it under the key
  // "report/<rank>", where a test can read it.
  virtual Status SendReport(int rank, const std::string& json) {
    return Set("report/" + std::to_string(rank), json);
  }

  // Hands a piece of rank `rank`'s timeline file to the job's collector, to be written at `offset`
  // of its copy (a runtime whose RuntimeOptions::timeline says send_to_launcher does so when it
  // ends). hvdrun's rendezvous service writes it to the job's timeline directory; this default
  // refuses it.
  virtual Status SendTimelinePiece(int rank, uint64_t offset, const std::string& data) {
    (void)offset;
    (void)data;
    return Status::Error("rank " + std::to_string(rank) + ": this store takes no timeline files");
  }
};

}  // namespace hvdrun

#endif  // HVDRUN_KEY_VALUE_STORE_H_
