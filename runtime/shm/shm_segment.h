// ShmSegment: one shared-memory segment per job and host, mapped by every local rank, with the
// barrier its collectives synchronize by (runtime/shm/shm_allreduce.h).
//
// Opening it is collective among the local ranks of one host: local rank 0 creates a POSIX shared
// memory object under a name of 128 random bits (/dev/shm/hvdrun-<32 hex digits>), mode 0600,
// reserves its pages (so that a full /dev/shm is an error here, not a SIGBUS later) and publishes the
// name in the job's store, which only holders of the job's secret can read; the others open and
// map it. The last local rank to map it unlinks the name, so from then on no process can open it
// and nothing of it stays in /dev/shm whatever happens to the ranks (SIGKILL included): the pages
// go with the last mapping. Local rank 0 also unlinks it whenever opening fails, and at the end of
// Open in any case; only a SIGKILL between its creation and the last rank's mapping (a bootstrap
// step) can leave the name behind.
//
// The barrier: each local rank has a cache line of its own in the segment holding how many
// barriers it has arrived at; a rank waits until every line has reached its own count, spinning
// briefly and then sleeping on a futex in the segment that every arrival rings. While it waits it
// checks, every kLivenessInterval, whether a missing rank's process still lives (a pidfd opened
// when the segment was mapped, so a reused pid cannot pass for it) and whether a rank has marked
// itself failed (Fail): either ends the wait at once with an error naming that rank; so does the
// collective timeout, naming every rank still missing. Nothing is sent over a socket.
//
// Layout: a header page (the ranks' lines), then two sets (double buffering) of one slot of
// slot_bytes() per local rank.
//
// Not thread-safe: one collective thread per rank uses it, as the Backend it serves.
#ifndef HVDRUN_RUNTIME_SHM_SHM_SEGMENT_H_
#define HVDRUN_RUNTIME_SHM_SHM_SEGMENT_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hvdrun/key_value_store.h"
#include "hvdrun/status.h"

namespace hvdrun {

// The local ranks of one host that share a segment.
struct ShmGroup {
  int local_rank = 0;
  int local_size = 1;
  int rank = 0;  // this rank's place in the job, for errors
  // Where in the job's store the ranks of this host exchange the segment's name and their
  // outcomes: the same for the host's ranks, unique per host and Runtime instance.
  std::string store_prefix;
  // How long bootstrapping may wait for a local rank, and how long one barrier may.
  std::chrono::milliseconds timeout{60000};
};

class ShmSegment {
 public:
  // The slots of all local ranks (two sets) take about this much of /dev/shm (SlotBytesFor): 16
  // MiB, well inside a container's default 64 MiB /dev/shm.
  static constexpr size_t kSlotBudgetBytes = size_t{16} << 20;
  // Bytes of each slot, per local rank and set: the budget shared out, at least 256 KiB (a segment
  // of more than 32 local ranks then takes more than the budget). Large slots, because every chunk
  // costs two barriers, and a barrier that a rank sleeps through costs a scheduler hand-off, which
  // on a shared machine is worth megabytes of copying: 64 MiB float32 sums of 2 ranks on a 2-core
  // machine at load 6 (docs/benchmarks.md) reached 0.1-0.8 GB/s busbw with 64-256 KiB slots, 1.2
  // with 1 MiB, 1.7-3.7 with 4 MiB, 2.2-3.5 with 8 MiB and 1.6-2.4 with 16 MiB.
  static size_t SlotBytesFor(int local_size);
  // How often a waiting rank checks that the ranks it waits for still live.
  static constexpr std::chrono::milliseconds kLivenessInterval{20};
  // The most local ranks a segment serves.
  static constexpr int kMaxLocalRanks = 1024;

  // Opens (local rank 0 creates) the segment of `group` through `store`: a collective of the
  // host's local ranks. An error names the step, the host's local rank at fault and the cause.
  static StatusOr<std::unique_ptr<ShmSegment>> Open(KeyValueStore& store, const ShmGroup& group,
                                                    size_t slot_bytes);
  // Marks this rank as gone (a rank still waiting for it fails at once, naming it) and unmaps.
  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  int local_rank() const { return group_.local_rank; }
  int local_size() const { return group_.local_size; }
  size_t slot_bytes() const { return slot_bytes_; }
  // The slot of `local_rank` in set `set` (0 or 1).
  std::byte* slot(int set, int local_rank) const;
  // The name it had in /dev/shm (unlinked once every local rank mapped it).
  const std::string& name() const { return name_; }

  // Arrives at the next barrier and waits for every local rank to arrive at it. `what` names the
  // collective in errors ("allreduce"). After an error the segment is unusable.
  Status Barrier(const char* what);
  // Marks this rank failed, so that ranks waiting for it stop at once with its rank named.
  void Fail();

 private:
  struct Header;
  // Open's steps. Local rank 0 creates the segment and publishes its name (or its error); the others
  // attach to the published one. Each returns the mapping, or nullptr with `error` set.
  static void* CreateAndPublish(KeyValueStore& store, const ShmGroup& group, size_t slot_bytes,
                                std::string* name, std::string* error);
  static void* AttachPublished(KeyValueStore& store, const ShmGroup& group, size_t slot_bytes,
                               std::string* name, std::string* error);
  // Publishes this rank's `error` (empty: mapped) and reads every local rank's: the failure to report
  // (this rank's own first), or "" when all of them mapped the segment.
  static std::string AgreeOnOutcome(KeyValueStore& store, const ShmGroup& group, const std::string& error);
  ShmSegment(ShmGroup group, std::string name, void* base, size_t bytes, size_t slot_bytes);
  Header& header() const;
  // Why local rank `local` stops a wait, or OK when it may still arrive.
  Status CheckPeer(int local, const char* what) const;
  Status OpenPidfds();
  // "rank R (local rank L, pid P)"
  std::string Describe(int local) const;

  const ShmGroup group_;
  const std::string name_;
  void* const base_;
  const size_t bytes_;
  const size_t slot_bytes_;
  uint32_t barriers_ = 0;    // barriers this rank has arrived at
  std::vector<int> pidfds_;  // per local rank; -1 for this process's own ranks (threads)
  Status broken_;
};

// The segment's /dev/shm name for 16 random bytes: "/hvdrun-" and 32 hex digits.
std::string ShmSegmentName(const unsigned char (&random)[16]);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_SHM_SHM_SEGMENT_H_
