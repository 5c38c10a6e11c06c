// Latch: a single-use countdown that threads wait on until it reaches zero, as C++20's std::latch,
// which GCC 10's libstdc++ (the relocatable bundle's baseline, docs/bundle-baseline.md) lacks.
// Code built into the bundle uses this one; the count never goes up and the latch cannot be reset.
//
// Thread-safe: every member may be called from any thread at once. Counting down below zero, or
// destroying the latch while a thread waits on it, is a programming error (undefined behaviour, as
// for std::latch).
#ifndef HVDRUN_COMMON_LATCH_H_
#define HVDRUN_COMMON_LATCH_H_

#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace hvdrun {

class Latch {
 public:
  explicit Latch(std::ptrdiff_t count) : count_(count) {}
  Latch(const Latch&) = delete;
  Latch& operator=(const Latch&) = delete;

  // Lowers the count by n; at zero, wakes every waiting thread.
  void CountDown(std::ptrdiff_t n = 1);
  // Whether the count has reached zero; never blocks.
  bool TryWait() const;
  // Blocks until the count reaches zero (returns at once where it has).
  void Wait() const;
  // CountDown(n), then Wait().
  void ArriveAndWait(std::ptrdiff_t n = 1);

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable zero_;
  std::ptrdiff_t count_;  // guarded by mutex_
};

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_LATCH_H_
