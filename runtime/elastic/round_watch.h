// RoundWatch: ends the collectives of an elastic runtime's round once hvdrun has re-formed the job
// without it (docs/elastic.md).
//
// A peer that dies closes its connections, and a collective waiting for it fails at once. A peer
// whose host went silent (its link cut, the machine off) closes nothing: a Gloo collective waiting
// for it would wait for the backend's limit (gloo_backend.h: the stall shutdown time, else 30 days).
// hvdrun sees the host lost within its heartbeat timeout and writes the job's next round; from then
// on nothing of this round can complete. The watch reads the job's "elastic/round" every 500 ms;
// once it names a later round, unless hvdrun has announced new hosts since the runtime joined (the
// running ranks then go on until their next commit), it shuts down the receiving side
// (shutdown(2), SHUT_RD) of the sockets the runtime opened while it started: each reads an end, as
// from a peer that closed its side, and every collective of the round that waits on them fails with
// ErrorKind::kRecoverable (RecoverableBackend); the program re-forms. The sending side stays open,
// so that nothing writes into a shut socket (which would raise SIGPIPE).
//
// The runtime's sockets are those the process opened between two OpenSockets() calls around the
// runtime's start (its Gloo pairs and listeners), and around each process set's start (Add): a
// socket another thread of the program opened meanwhile is counted too. A socket whose descriptor
// was closed (a removed set's) is left alone, even if its number now names another socket.
//
// Thread-safe: a thread of its own; the destructor stops it.
#ifndef HVDRUN_RUNTIME_ELASTIC_ROUND_WATCH_H_
#define HVDRUN_RUNTIME_ELASTIC_ROUND_WATCH_H_

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "hvdrun/key_value_store.h"

namespace hvdrun {

// The process's open sockets: file descriptor to inode.
using OpenSocketTable = std::map<int, ino_t>;

// The sockets this process has open now (/proc/self/fd).
OpenSocketTable OpenSockets();

class RoundWatch {
 public:
  // Watches `job_store`'s round for one later than `round`, while "elastic/hosts_updated" stays
  // `hosts_updated`; the sockets it ends are those of `after` that `before` lacks.
  RoundWatch(std::shared_ptr<KeyValueStore> job_store, int round, int64_t hosts_updated,
             const OpenSocketTable& before, const OpenSocketTable& after);
  ~RoundWatch();
  RoundWatch(const RoundWatch&) = delete;

  // Watches also the sockets of `after` that `before` lacks (a process set's backends); once the
  // round is over, ends them at once.
  void Add(const OpenSocketTable& before, const OpenSocketTable& after);
  RoundWatch& operator=(const RoundWatch&) = delete;

 private:
  void Watch();
  // Whether the job has gone on to a later round without this one (see above).
  bool RoundIsOver() const;
  // Ends the sockets of `sockets` that are still open as themselves.
  static void EndSockets(const OpenSocketTable& sockets);

  const std::shared_ptr<KeyValueStore> job_store_;
  const int round_;
  const int64_t hosts_updated_;
  std::mutex mutex_;
  std::condition_variable wake_;
  OpenSocketTable sockets_;  // under mutex_
  bool stopping_ = false;    // under mutex_
  bool ended_ = false;       // under mutex_: the round is over and its sockets are ended
  std::thread thread_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_ELASTIC_ROUND_WATCH_H_
