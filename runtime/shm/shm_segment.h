// ShmSegment: one shared-memory segment per job and host, mapped by every local rank, with the
// barrier its collectives synchronize by (runtime/shm/shm_allreduce.h).
//
// Opening it is collective among the local ranks of one host, and nothing of the segment ever has a
// name in /dev/shm or anywhere else in the file system. Local rank 0 creates the memory with
// memfd_create (close-on-exec), reserves its pages (so that running out of memory is an error
// here, not a SIGBUS later), seals its size (no rank can shrink it under another's mapping) and
// maps it. It hands the descriptor to the host's other local ranks
// over a Unix socket in the abstract namespace (runtime/shm/fd_handover.h: no file, a name of 128
// random bits that it publishes in the job's store, which only holders of the job's secret can
// read). Each other local rank first publishes its pid in the store, then connects and receives
// the descriptor (SCM_RIGHTS) and maps it. Local rank 0 accepts exactly local_size - 1
// connections within the group's timeout and hands the descriptor only to a peer of its own user
// (SO_PEERCRED) whose pid is a published local rank's; any other connection is closed and does not
// count. Then it closes the socket, whose name goes with it. The memory goes with the last
// descriptor and mapping, whatever happens to the ranks (SIGKILL included, at any step).
//
// The barrier: each local rank has a cache line of its own in the segment holding how many
// barriers it has arrived at; a rank waits until every line has reached its own count, spinning
// briefly and then sleeping on a futex in the segment that every arrival rings. While it waits it
// checks, every kLivenessInterval, whether a missing rank's process still lives (a pidfd opened
// when the segment was mapped, so a reused pid cannot pass for it) and whether a rank has marked
// itself failed (Fail): either ends the wait at once with an error naming that rank. A live rank
// is waited for as long as it takes, unless the group has a barrier limit (the stall shutdown time):
// past it the wait fails, naming every rank still missing. Nothing is sent over a socket.
//
// Layout: a header page (the ranks' lines), then two sets (double buffering) of one slot of
// slot_bytes() per local rank (runtime/shm/shm_layout.h). Open's steps: runtime/shm/shm_bootstrap.h.
//
// Not thread-safe: one collective thread per rank uses it, as the Backend it serves.
#ifndef HVDRUN_RUNTIME_SHM_SHM_SEGMENT_H_
#define HVDRUN_RUNTIME_SHM_SHM_SEGMENT_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hvdrun/key_value_store.h"
#include "hvdrun/status.h"
#include "runtime/shm/shm_group.h"
#include "runtime/shm/shm_layout.h"

namespace hvdrun {

class ShmSegment {
 public:
  // The slots of all local ranks (two sets) take about this much shared memory (SlotBytesFor):
  // 16 MiB. A memfd's pages count against the job's memory (its cgroup), not against the size of
  // /dev/shm (a container's is 64 MiB by default).
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
  // What the segment is, for messages: "memfd:hvdrun-shm (inode N)", as /proc/PID/maps shows
  // its mappings ("/memfd:hvdrun-shm (deleted)", with the inode). Unique among the host's live
  // segments.
  const std::string& description() const { return description_; }

  // Arrives at the next barrier and waits for every local rank to arrive at it. `what` names the
  // collective in errors ("allreduce"). After an error the segment is unusable.
  Status Barrier(const char* what);
  // Marks this rank failed, so that ranks waiting for it stop at once with its rank named.
  void Fail();
  // While a Barrier waits: "waiting for rank 1 (local rank 1, pid 4242)", naming each local rank
  // that has not arrived; else empty. Thread-safe (Backend::Progress).
  std::string Missing() const;

 private:
  ShmSegment(ShmGroup group, std::string description, void* base, size_t bytes, size_t slot_bytes);
  shm_layout::Header& header() const;
  // Why local rank `local` stops a wait, or OK when it may still arrive.
  Status CheckPeer(int local, const char* what) const;
  Status OpenPidfds();
  // "rank R (local rank L, pid P)"
  std::string Describe(int local) const;

  const ShmGroup group_;
  const std::string description_;
  void* const base_;
  const size_t bytes_;
  const size_t slot_bytes_;
  uint32_t barriers_ = 0;  // barriers this rank has arrived at
  // The barrier this rank waits at, past its spin; 0: none (Missing).
  std::atomic<uint32_t> waiting_at_{0};
  std::vector<int> pidfds_;  // per local rank; -1 for this process's own ranks (threads)
  Status broken_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_SHM_SHM_SEGMENT_H_
