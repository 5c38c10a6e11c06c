// The bytes of a shared-memory segment (runtime/shm/shm_segment.h), as every local rank maps them:
// a header page (the Header, then one cache line per local rank, RankLine), then two sets (double
// buffering) of one slot of slot_bytes per local rank, from DataOffset on.
//
// The creator writes Header::magic last (release); a rank that maps the segment checks it, and the
// sizes, before it trusts anything else in it. Every field that ranks share after that is atomic;
// the futex words (Header::bell) are plain 32-bit words.
#ifndef HVDRUN_RUNTIME_SHM_SHM_LAYOUT_H_
#define HVDRUN_RUNTIME_SHM_SHM_LAYOUT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

namespace hvdrun::shm_layout {

constexpr uint64_t kMagic = 0x68766472756e5348;  // "hvdrunSH"
constexpr size_t kLineBytes = 64;
constexpr size_t kLinesOffset = 128;
constexpr size_t kPageBytes = 4096;

struct Header {
  std::atomic<uint64_t> magic;  // written last by the creator
  uint64_t slot_bytes;
  uint32_t local_size;
  char line_end[44];               // the bell on a cache line of its own
  std::atomic<uint32_t> bell;      // rung (incremented, woken) by every arrival and failure
  std::atomic<uint32_t> sleepers;  // ranks asleep on the bell
};
static_assert(sizeof(Header) <= kLinesOffset && offsetof(Header, bell) == 64);

enum RankState : uint32_t { kRunning = 0, kGone = 1, kFailed = 2 };

// One local rank's cache line.
struct RankLine {
  std::atomic<uint32_t> arrived;  // barriers this rank has arrived at
  std::atomic<uint32_t> state;    // RankState
  std::atomic<int32_t> pid;
  std::atomic<int32_t> rank;  // in the job
};
static_assert(sizeof(RankLine) <= kLineBytes);
static_assert(std::atomic<uint32_t>::is_always_lock_free && sizeof(std::atomic<uint32_t>) == sizeof(uint32_t),
              "futexes need plain 32-bit words");

inline size_t RoundUp(size_t value, size_t unit) { return (value + unit - 1) / unit * unit; }

// Where the slots start.
inline size_t DataOffset(int local_size) {
  return RoundUp(kLinesOffset + kLineBytes * static_cast<size_t>(local_size), kPageBytes);
}

// The whole segment's size.
inline size_t SegmentBytes(int local_size, size_t slot_bytes) {
  return DataOffset(local_size) + 2 * static_cast<size_t>(local_size) * slot_bytes;
}

inline Header& HeaderOf(void* base) { return *std::launder(reinterpret_cast<Header*>(base)); }

// The line of local rank `local`.
inline RankLine& Line(void* base, int local) {
  return *std::launder(reinterpret_cast<RankLine*>(static_cast<std::byte*>(base) + kLinesOffset +
                                                   kLineBytes * static_cast<size_t>(local)));
}

}  // namespace hvdrun::shm_layout

#endif  // HVDRUN_RUNTIME_SHM_SHM_LAYOUT_H_
