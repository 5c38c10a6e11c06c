// Runtime::Impl: the collective thread behind a Runtime and the queue that feeds it.
//
// One thread per Runtime bootstraps the backend (arrival check, then CreateBackend) and then runs
// the queued collectives one at a time, in submission order. The backend is created, used and
// destroyed on that thread only, except by RunBaseline, which runs on the caller's thread once the
// queue is empty and holds backend_mutex_ while it does. The first failure is kept in broken_:
// queued and later collectives complete with it without running.
//
// Thread-safe: Submit and RunBaseline may be called from any thread.
#ifndef HVDRUN_RUNTIME_RUNTIME_IMPL_H_
#define HVDRUN_RUNTIME_RUNTIME_IMPL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "hvdrun/runtime.h"
#include "hvdrun/status.h"
#include "runtime/backend.h"

namespace hvdrun {

class Runtime::Impl {
 public:
  using Collective = std::function<Status(Backend&)>;

  explicit Impl(RuntimeOptions options);
  // Runs what is queued, then stops the thread and destroys the backend.
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // Starts the collective thread and waits until the backend is ready or bootstrapping failed.
  Status Start();
  // Queues `collective`; the handle completes when it has run (or at once if the runtime is broken).
  CollectiveHandle Submit(Collective collective);
  // Waits for the queue to empty, then runs `collective` on this thread.
  Status RunBaseline(const Collective& collective);

  const RuntimeOptions& options() const { return options_; }

 private:
  struct Pending {
    Collective collective;
    std::shared_ptr<CollectiveHandle::State> state;
  };

  void ThreadMain();
  Status Bootstrap();
  Status RunGuarded(const Collective& collective);

  const RuntimeOptions options_;
  std::unique_ptr<Backend> backend_;  // written by the collective thread before started_ is set
  std::mutex backend_mutex_;          // held while a collective runs on backend_

  std::mutex mutex_;
  std::condition_variable changed_;  // queue, started_, idle or stopping_ changed
  std::deque<Pending> queue_;        // GUARDED_BY(mutex_)
  bool started_ = false;             // GUARDED_BY(mutex_): bootstrapping finished
  bool running_ = false;             // GUARDED_BY(mutex_): a collective is executing
  bool stopping_ = false;            // GUARDED_BY(mutex_)
  Status broken_;                    // GUARDED_BY(mutex_): the first failure, or OK
  std::thread thread_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_RUNTIME_IMPL_H_
