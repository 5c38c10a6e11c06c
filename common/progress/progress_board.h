// The progress board: a small file, mapped in shared memory, in which a rank's runtime publishes how
// far it has got (collectives submitted, completed, failed) and a flight recorder of its last N
// collectives, and which the rank's agent reads every progress period. Because the board lives in
// shared memory, the agent reads it while the rank is stopped by a signal, and after it died.
//
// Layout (every field a 64-bit word, host byte order: writer and reader are on one host):
//   header, 8 words: magic "hvdprog1", version << 32 | capacity, submitted, completed, failed, pid,
//                    two reserved
//   capacity records of kRecordWords words each; the collective with sequence s (1, 2, ...) lies in
//   record (s - 1) % capacity, so the ring keeps the last `capacity` collectives.
// Each record carries its own sequence lock: its first word is odd while the writer changes it, and
// a reader keeps a copy only when that word was even and unchanged across its reads, so that it never
// sees a torn record. A writer stopped halfway through a record leaves that record unreadable and the
// rest of the board readable. Every word is a lock-free std::atomic, so publishing is a few plain
// stores and no system call; a name is cut to kNameBytes bytes.
//
// Writers: Submitted, Advance and the reads may run on any threads at once, as long as each
// collective is advanced by one thread at a time (the runtime hands a collective from thread to
// thread under its own locks) and no more than `capacity` collectives are submitted while one
// record is written.
#ifndef HVDRUN_COMMON_PROGRESS_PROGRESS_BOARD_H_
#define HVDRUN_COMMON_PROGRESS_PROGRESS_BOARD_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/protocol/agent_protocol.h"
#include "hvdrun/status.h"

namespace hvdrun::progress {

inline constexpr uint32_t kDefaultRecords = 64;
inline constexpr uint32_t kMaxRecords = 4096;
inline constexpr size_t kNameBytes = 80;
inline constexpr size_t kOpBytes = 16;
inline constexpr size_t kHeaderWords = 8;
inline constexpr size_t kRecordWords = 10 + kNameBytes / 8;

// The size of a board file with `records` records.
size_t BoardBytes(uint32_t records);

class ProgressBoard {
 public:
  // Creates (or truncates) `path` with mode 0600, sized for `records` (1..kMaxRecords) records,
  // and maps it. The file stays when the board is destroyed: its reader removes it.
  static StatusOr<std::unique_ptr<ProgressBoard>> Create(const std::string& path, uint32_t records);
  ~ProgressBoard();
  ProgressBoard(const ProgressBoard&) = delete;
  ProgressBoard& operator=(const ProgressBoard&) = delete;

  // Records a collective that the rank's code submitted, and returns its sequence, which Advance
  // takes.
  uint64_t Submitted(std::string_view name, std::string_view op, uint64_t bytes, int32_t process_set);
  // Moves the collective `sequence` to `phase` (kNegotiated, kInBackend, kDone or kFailed) now;
  // a collective that the ring has dropped only counts in the header.
  void Advance(uint64_t sequence, protocol::CollectivePhase phase);

 private:
  ProgressBoard(std::atomic<uint64_t>* words, size_t bytes, uint32_t capacity);
  std::atomic<uint64_t>* Record(uint64_t sequence) const;

  std::atomic<uint64_t>* words_;
  size_t bytes_;
  uint32_t capacity_;
};

// Reads the board at `path` into `progress`'s board fields (board_read and completed to
// process_set), and its records, oldest first, when `with_records`. Fails, leaving `progress`
// untouched, when the file is missing, not yet written, or not a board.
Status ReadProgressBoard(const std::string& path, bool with_records, protocol::RankProgress* progress);

// The current time in unix milliseconds, at the coarse clock's resolution (a few ms): no system call.
int64_t UnixMillisNow();

}  // namespace hvdrun::progress

#endif  // HVDRUN_COMMON_PROGRESS_PROGRESS_BOARD_H_
