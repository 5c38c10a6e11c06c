#include "common/latch.h"

namespace hvdrun {

void Latch::CountDown(std::ptrdiff_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  count_ -= n;
  if (count_ <= 0) zero_.notify_all();
}

bool Latch::TryWait() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return count_ <= 0;
}

void Latch::Wait() const {
  std::unique_lock<std::mutex> lock(mutex_);
  zero_.wait(lock, [this] { return count_ <= 0; });
}

void Latch::ArriveAndWait(std::ptrdiff_t n) {
  CountDown(n);
  Wait();
}

}  // namespace hvdrun
