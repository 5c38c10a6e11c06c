// Test helpers for runtime/shm/: ranks of one "host" as threads, each with its own ShmSegment
// opened through one in-memory store. For tests only.
#ifndef HVDRUN_RUNTIME_SHM_SHM_TEST_GROUP_H_
#define HVDRUN_RUNTIME_SHM_SHM_TEST_GROUP_H_

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "hvdrun/key_value_store.h"
#include "runtime/in_memory_store.h"
#include "runtime/shm/shm_segment.h"

namespace hvdrun::testing {

inline ShmGroup TestShmGroup(int local_rank, int local_size,
                             std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  ShmGroup group;
  group.local_rank = local_rank;
  group.local_size = local_size;
  group.rank = local_rank;
  group.store_prefix = "test/shm/";
  group.timeout = timeout;
  return group;
}

// Opens a segment of `slot_bytes` slots for each of `size` local ranks, each on a thread of its own,
// and calls body(segment) there; returns when every body has returned. An Open failure is a test
// failure.
inline void RunShmRanks(int size, size_t slot_bytes,
                        const std::function<void(std::unique_ptr<ShmSegment>& segment)>& body) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(size));
  for (int local = 0; local < size; ++local) {
    threads.emplace_back([local, size, slot_bytes, store, &body] {
      StatusOr<std::unique_ptr<ShmSegment>> segment =
          ShmSegment::Open(*store, TestShmGroup(local, size), slot_bytes);
      if (!segment.ok()) {
        ADD_FAILURE() << "local rank " << local << ": " << segment.status().message();
        return;
      }
      body(segment.value());
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace hvdrun::testing

#endif  // HVDRUN_RUNTIME_SHM_SHM_TEST_GROUP_H_
