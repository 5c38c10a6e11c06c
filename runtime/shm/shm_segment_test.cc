#include "runtime/shm/shm_segment.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/in_memory_store.h"
#include "runtime/shm/shm_allreduce.h"
#include "runtime/shm/shm_test_group.h"

namespace hvdrun {
namespace {

using std::chrono::milliseconds;

constexpr size_t kSlot = 4096;

bool InDevShm(const std::string& name) { return std::filesystem::exists("/dev/shm" + name); }

TEST(ShmSegmentSlotTest, SlotsShareTheBudgetDownToAMinimum) {
  EXPECT_EQ(ShmSegment::SlotBytesFor(2), size_t{4} << 20);
  EXPECT_EQ(ShmSegment::SlotBytesFor(8), size_t{1} << 20);
  EXPECT_EQ(ShmSegment::SlotBytesFor(3) % 4096, 0U);
  EXPECT_LE(size_t{3} * 2 * ShmSegment::SlotBytesFor(3), ShmSegment::kSlotBudgetBytes);
  EXPECT_EQ(ShmSegment::SlotBytesFor(64), size_t{256} << 10);
}

TEST(ShmSegmentNameTest, IsHvdrunAndThirtyTwoHexDigits) {
  const unsigned char random[16] = {0x00, 0x01, 0xab, 0xff, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  EXPECT_EQ(ShmSegmentName(random), "/hvdrun-0001abff0405060708090a0b0c0d0e0f");
}

// While local rank 0 waits for the others, the segment exists, mode 0600 and this user's; once
// every local rank has mapped it, its name is gone: nothing can open it, and nothing is left in
// /dev/shm whatever then happens to the ranks.
TEST(ShmSegmentTest, IsPrivateWhileOpeningAndUnlinkedOnceMapped) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  std::unique_ptr<ShmSegment> first;
  std::thread creator([&] {
    StatusOr<std::unique_ptr<ShmSegment>> segment =
        ShmSegment::Open(*store, testing::TestShmGroup(0, 2), kSlot);
    ASSERT_TRUE(segment.ok()) << segment.status().message();
    first = std::move(segment).value();
  });
  StatusOr<std::string> name = store->Get("test/shm/name", std::chrono::seconds(30));
  ASSERT_TRUE(name.ok()) << name.status().message();
  struct stat facts {};
  ASSERT_EQ(::stat(("/dev/shm" + name.value()).c_str(), &facts), 0) << name.value();
  EXPECT_EQ(facts.st_mode & 0777, 0600U);
  EXPECT_EQ(facts.st_uid, ::geteuid());

  StatusOr<std::unique_ptr<ShmSegment>> second = ShmSegment::Open(*store, testing::TestShmGroup(1, 2), kSlot);
  creator.join();
  ASSERT_TRUE(second.ok()) << second.status().message();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(second.value()->name(), name.value());
  EXPECT_FALSE(InDevShm(name.value()));
  EXPECT_EQ(::shm_open(name.value().c_str(), O_RDWR, 0), -1);
  EXPECT_EQ(errno, ENOENT);
}

// A second job on the host (another store, as another secret gives) gets a segment of its own,
// under another name, and cannot open the first one's.
TEST(ShmSegmentTest, ASecondJobCannotOpenTheFirstsSegment) {
  std::vector<std::string> names;
  for (int job = 0; job < 2; ++job) {
    testing::RunShmRanks(2, 4096, [&](std::unique_ptr<ShmSegment>& segment) {
      if (segment->local_rank() == 0) names.push_back(segment->name());
      ASSERT_TRUE(segment->Barrier("test").ok());
    });
  }
  ASSERT_EQ(names.size(), 2U);
  EXPECT_NE(names[0], names[1]);
  for (const std::string& name : names) EXPECT_EQ(::shm_open(name.c_str(), O_RDONLY, 0), -1) << name;
}

TEST(ShmSegmentTest, ALateRankIsNamedAtTheTimeout) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  std::unique_ptr<ShmSegment> late;
  std::thread other([&] {
    StatusOr<std::unique_ptr<ShmSegment>> segment =
        ShmSegment::Open(*store, testing::TestShmGroup(1, 2, milliseconds(300)), kSlot);
    ASSERT_TRUE(segment.ok()) << segment.status().message();
    late = std::move(segment).value();
  });
  StatusOr<std::unique_ptr<ShmSegment>> segment =
      ShmSegment::Open(*store, testing::TestShmGroup(0, 2, milliseconds(300)), kSlot);
  other.join();
  ASSERT_TRUE(segment.ok()) << segment.status().message();
  Status waited = segment.value()->Barrier("allreduce");
  EXPECT_EQ(waited.message(), "shared memory: allreduce: rank(s) 1 did not arrive within 300 ms");
  // Broken from then on.
  EXPECT_EQ(segment.value()->Barrier("allreduce").message(), waited.message());
}

TEST(ShmSegmentTest, ARankThatEndsOrFailsIsNamedAtOnce) {
  for (bool fails : {false, true}) {
    std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
    std::unique_ptr<ShmSegment> waiter;
    std::thread other([&] {
      StatusOr<std::unique_ptr<ShmSegment>> segment =
          ShmSegment::Open(*store, testing::TestShmGroup(1, 2), kSlot);
      ASSERT_TRUE(segment.ok()) << segment.status().message();
      if (fails) {
        segment.value()->Fail();
      } else {
        segment.value().reset();
      }
    });
    StatusOr<std::unique_ptr<ShmSegment>> segment =
        ShmSegment::Open(*store, testing::TestShmGroup(0, 2), kSlot);
    other.join();
    ASSERT_TRUE(segment.ok()) << segment.status().message();
    const std::string pid = std::to_string(::getpid());
    EXPECT_EQ(segment.value()->Barrier("allreduce").message(),
              "shared memory: rank 1 (local rank 1, pid " + pid + ") " +
                  (fails ? "failed during allreduce" : "ended its runtime during allreduce"));
  }
}

TEST(ShmSegmentTest, ACreatorFailureStopsEveryLocalRank) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  // What local rank 0 publishes when it cannot create the segment.
  ASSERT_TRUE(store->Set("test/shm/name", "!reserving 64 MiB in /dev/shm: No space left on device").ok());
  ASSERT_TRUE(
      store->Set("test/shm/mapped/0", "!rank 0: reserving 64 MiB in /dev/shm: No space left on device").ok());
  StatusOr<std::unique_ptr<ShmSegment>> segment =
      ShmSegment::Open(*store, testing::TestShmGroup(1, 2, milliseconds(2000)), kSlot);
  ASSERT_FALSE(segment.ok());
  EXPECT_NE(segment.status().message().find(
                "local rank 0 could not create it: reserving 64 MiB in /dev/shm: No space left on device"),
            std::string::npos)
      << segment.status().message();
}

// A store in a directory, for local ranks that are processes (fork): Set writes a file under a
// temporary name and renames it, Get polls. For this test only.
class DirectoryStore : public KeyValueStore {
 public:
  explicit DirectoryStore(std::string dir) : dir_(std::move(dir)) {}
  Status Set(const std::string& key, const std::string& value) override {
    const std::string path = Path(key);
    {
      std::ofstream file(path + ".new");
      file << value;
    }
    std::filesystem::rename(path + ".new", path);
    return Status::Ok();
  }
  StatusOr<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!std::filesystem::exists(Path(key))) {
      if (std::chrono::steady_clock::now() > deadline) return Status::Error("no key " + key);
      std::this_thread::sleep_for(milliseconds(5));
    }
    std::ifstream file(Path(key));
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }
  Status Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    for (const std::string& key : keys) {
      StatusOr<std::string> value = Get(key, timeout);
      if (!value.ok()) return value.status();
    }
    return Status::Ok();
  }
  StatusOr<int64_t> Add(const std::string& /*key*/, int64_t /*delta*/) override {
    return Status::Error("no Add");
  }
  StatusOr<std::string> CompareAndSet(const std::string& /*key*/, const std::string& /*expected*/,
                                      const std::string& /*desired*/) override {
    return Status::Error("no CompareAndSet");
  }
  Status Delete(const std::string& /*key*/) override { return Status::Error("no Delete"); }

 private:
  std::string Path(std::string key) const {
    for (char& c : key) {
      if (c == '/') c = '_';
    }
    return dir_ + "/" + key;
  }
  std::string dir_;
};

// Kills `pid` and reaps it when the test leaves, whatever happened.
struct ChildProcess {
  pid_t pid = -1;
  ~ChildProcess() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

// A local rank that is SIGKILLed inside an allreduce (waiting in it for rank 0) makes rank 0's
// allreduce fail, naming it, as soon as the liveness check sees it dead (not at the timeout), and
// leaves nothing in /dev/shm.
TEST(ShmSegmentTest, ARankKilledInsideAnAllreduceIsNamed) {
  const std::string dir = ::testing::TempDir() + "/shm_kill_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  DirectoryStore store(dir);
  constexpr size_t kCount = size_t{1} << 20;
  const auto timeout = std::chrono::seconds(60);
  ChildProcess child;
  child.pid = ::fork();
  ASSERT_GE(child.pid, 0);
  if (child.pid == 0) {
    ShmGroup group = testing::TestShmGroup(1, 2, timeout);
    group.rank = 7;
    StatusOr<std::unique_ptr<ShmSegment>> segment = ShmSegment::Open(store, group, 4096);
    if (!segment.ok()) ::_exit(2);
    ShmAllreduce allreduce(std::move(segment).value(), 2);
    std::vector<float> values(kCount, 1.0F);
    (void)store.Set("child/inside", "");
    (void)allreduce.Allreduce(values.data(), values.data(), kCount, DataType::kFloat32, ReduceOp::kSum);
    ::_exit(0);  // not reached: it waits for rank 0 until it is killed
  }
  StatusOr<std::unique_ptr<ShmSegment>> segment =
      ShmSegment::Open(store, testing::TestShmGroup(0, 2, timeout), 4096);
  ASSERT_TRUE(segment.ok()) << segment.status().message();
  const std::string name = segment.value()->name();
  ShmAllreduce allreduce(std::move(segment).value(), 2);
  ASSERT_TRUE(store.Get("child/inside", timeout).ok());
  std::this_thread::sleep_for(milliseconds(100));  // into its first barrier, where it waits for rank 0
  ASSERT_EQ(::kill(child.pid, SIGKILL), 0);
  std::vector<float> values(kCount, 2.0F);
  const auto start = std::chrono::steady_clock::now();
  Status status =
      allreduce.Allreduce(values.data(), values.data(), kCount, DataType::kFloat32, ReduceOp::kSum);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(status.message(), "shared memory: rank 7 (local rank 1, pid " + std::to_string(child.pid) +
                                  ") died during allreduce");
  // Far inside the 60 s timeout: the liveness check, not the timeout, ended the wait.
  EXPECT_LT(waited, std::chrono::seconds(10));
  EXPECT_FALSE(InDevShm(name));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hvdrun
