#include "runtime/shm/shm_segment.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "runtime/in_memory_store.h"
#include "runtime/shm/dev_shm_entries.h"
#include "runtime/shm/fd_handover.h"
#include "runtime/shm/shm_allreduce.h"
#include "runtime/shm/shm_test_group.h"

namespace hvdrun {
namespace {

using std::chrono::milliseconds;

constexpr size_t kSlot = 4096;

// Whether process `pid` maps a segment (a memfd) and nothing in /dev/shm.
bool MapsMemfdOnly(pid_t pid) {
  const std::string maps = testing::ProcessMaps(pid);
  return maps.find("/memfd:hvdrun-shm (deleted)") != std::string::npos &&
         maps.find("/dev/shm/") == std::string::npos;
}

TEST(ShmSegmentSlotTest, SlotsShareTheBudgetDownToAMinimum) {
  EXPECT_EQ(ShmSegment::SlotBytesFor(2), size_t{4} << 20);
  EXPECT_EQ(ShmSegment::SlotBytesFor(8), size_t{1} << 20);
  EXPECT_EQ(ShmSegment::SlotBytesFor(3) % 4096, 0U);
  EXPECT_LE(size_t{3} * 2 * ShmSegment::SlotBytesFor(3), ShmSegment::kSlotBudgetBytes);
  EXPECT_EQ(ShmSegment::SlotBytesFor(64), size_t{256} << 10);
}

// Nothing of the segment ever has a name in /dev/shm: not before, not while the local ranks open it
// (a watcher lists /dev/shm all along; each rank looks once it has the segment, before any of them
// ends), not after. Each rank maps a memfd.
TEST(ShmSegmentTest, NothingAppearsInDevShmWhileOpening) {
  for (int ranks = 1; ranks <= 4; ++ranks) {
    const std::set<std::string> before = testing::DevShmEntries();
    std::atomic<bool> opening{true};
    std::vector<std::string> seen;
    std::thread watcher([&] {
      while (opening.load()) {
        for (std::string& entry : testing::NewHvdrunEntries(before, {::getpid()})) {
          seen.push_back(std::move(entry));
        }
        std::this_thread::sleep_for(milliseconds(1));
      }
    });
    std::vector<std::string> descriptions(static_cast<size_t>(ranks));
    testing::RunShmRanks(ranks, kSlot, [&](std::unique_ptr<ShmSegment>& segment) {
      EXPECT_EQ(testing::NewHvdrunEntries(before, {::getpid()}), std::vector<std::string>())
          << ranks << " local ranks";
      EXPECT_TRUE(MapsMemfdOnly(::getpid())) << testing::ProcessMaps(::getpid());
      descriptions[static_cast<size_t>(segment->local_rank())] = segment->description();
      ASSERT_TRUE(segment->Barrier("test").ok());
    });
    opening = false;
    watcher.join();
    EXPECT_EQ(seen, std::vector<std::string>()) << ranks << " local ranks";
    EXPECT_EQ(testing::NewHvdrunEntries(before, {::getpid()}), std::vector<std::string>())
        << ranks << " local ranks";
    EXPECT_EQ(descriptions[0].rfind("memfd:hvdrun-shm (inode ", 0), 0U) << descriptions[0];
    for (const std::string& description : descriptions) EXPECT_EQ(description, descriptions[0]);
  }
}

// Two jobs on the host (two stores, as two secrets give) get segments of their own, and once a
// job's ranks have opened theirs, its socket is gone: nothing can receive the segment any more.
TEST(ShmSegmentTest, ASecondJobGetsASegmentOfItsOwn) {
  const std::shared_ptr<KeyValueStore> stores[2] = {NewInMemoryStore(), NewInMemoryStore()};
  std::unique_ptr<ShmSegment> segments[2][2];
  std::vector<std::thread> threads;
  for (int job = 0; job < 2; ++job) {
    for (int local = 0; local < 2; ++local) {
      threads.emplace_back([&, job, local] {
        StatusOr<std::unique_ptr<ShmSegment>> segment =
            ShmSegment::Open(*stores[job], testing::TestShmGroup(local, 2), kSlot);
        ASSERT_TRUE(segment.ok()) << segment.status().message();
        segments[job][local] = std::move(segment).value();
      });
    }
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_TRUE(segments[0][0] && segments[0][1] && segments[1][0] && segments[1][1]);
  EXPECT_EQ(segments[0][0]->description(), segments[0][1]->description());
  EXPECT_NE(segments[0][0]->description(), segments[1][0]->description());
  *segments[0][0]->slot(0, 0) = std::byte{1};
  *segments[1][0]->slot(0, 0) = std::byte{2};
  EXPECT_EQ(*segments[0][1]->slot(0, 0), std::byte{1});
  for (const std::shared_ptr<KeyValueStore>& store : stores) {
    StatusOr<std::string> name = store->Get("test/shm/name", milliseconds(0));
    ASSERT_TRUE(name.ok()) << name.status().message();
    StatusOr<int> fd =
        ReceiveFd(name.value(), ::getpid(), std::chrono::steady_clock::now() + std::chrono::seconds(5));
    ASSERT_FALSE(fd.ok());
    EXPECT_NE(fd.status().message().find("Connection refused"), std::string::npos) << fd.status().message();
  }
}

// Connects to the abstract socket `address` and waits up to 10 s for what it sends: exits 0 when the
// connection closes with no descriptor, 1 when a descriptor came, 2 on anything else. Before it
// connects it waits for a byte on `go` and, when `uid` is not -1, becomes that user. For a forked
// child of a process with threads: system calls only.
[[noreturn]] void ConnectAsIntruder(const sockaddr_un& address, socklen_t length, int go, int uid) {
  char byte = 0;
  if (::read(go, &byte, 1) != 1) ::_exit(2);
  if (uid != -1 && ::syscall(SYS_setuid, uid) != 0) ::_exit(2);
  const int socket = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (socket < 0 || ::connect(socket, reinterpret_cast<const sockaddr*>(&address), length) != 0) ::_exit(2);
  pollfd ready{socket, POLLIN, 0};
  if (::poll(&ready, 1, 10000) != 1) ::_exit(2);
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  iovec data{&byte, 1};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  const ssize_t received = ::recvmsg(socket, &message, 0);
  ::_exit(received > 0 && CMSG_FIRSTHDR(&message) != nullptr ? 1 : received >= 0 ? 0 : 2);
}

// Runs ConnectAsIntruder in a child; `before_go` runs in this process before the child may connect
// (it gets the child's pid). Returns the child's exit status.
int RunIntruder(const std::string& name, int uid, const std::function<void(pid_t)>& before_go) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  int go[2];
  if (::pipe(go) != 0) return -1;
  const pid_t child = ::fork();
  if (child == 0) ConnectAsIntruder(address, length, go[0], uid);
  ::close(go[0]);
  before_go(child);
  EXPECT_EQ(::write(go[1], "g", 1), 1);
  ::close(go[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A process that connects to local rank 0's socket without being a published local rank of the job
// is closed unserved and does not count: the real local rank then opens the segment. So is one of
// another user whose pid was published as a local rank's (as root only: it becomes nobody).
TEST(ShmSegmentTest, APeerThatIsNotALocalRankGetsNothing) {
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
  EXPECT_EQ(RunIntruder(name.value(), -1, [](pid_t) {}), 0)
      << "a process that is no local rank got the segment";
  if (::geteuid() == 0) {
    constexpr int kNobody = 65534;
    EXPECT_EQ(RunIntruder(name.value(), kNobody,
                          [&](pid_t child) {
                            ASSERT_TRUE(store->Set("test/shm/pid/1", std::to_string(child)).ok());
                          }),
              0)
        << "a process of another user got the segment";
  }
  StatusOr<std::unique_ptr<ShmSegment>> second = ShmSegment::Open(*store, testing::TestShmGroup(1, 2), kSlot);
  creator.join();
  ASSERT_TRUE(second.ok()) << second.status().message();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(second.value()->description(), first->description());
}

// A live rank that arrives late (busy in user code) is waited for past the bootstrap timeout: without
// a barrier limit, as long as it takes.
// Meanwhile Missing() names it.
TEST(ShmSegmentTest, ALiveLateRankIsWaitedForPastTheTimeout) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  std::atomic<ShmSegment*> waiting{nullptr};
  std::string missing;
  std::thread other([&] {
    StatusOr<std::unique_ptr<ShmSegment>> segment =
        ShmSegment::Open(*store, testing::TestShmGroup(1, 2, milliseconds(100)), kSlot);
    ASSERT_TRUE(segment.ok()) << segment.status().message();
    std::this_thread::sleep_for(milliseconds(500));  // five bootstrap timeouts in user code
    if (ShmSegment* first = waiting.load(); first != nullptr) missing = first->Missing();
    EXPECT_TRUE(segment.value()->Barrier("allreduce").ok());
  });
  StatusOr<std::unique_ptr<ShmSegment>> segment =
      ShmSegment::Open(*store, testing::TestShmGroup(0, 2, milliseconds(100)), kSlot);
  ASSERT_TRUE(segment.ok()) << segment.status().message();
  EXPECT_EQ(segment.value()->Missing(), "");
  waiting = segment.value().get();
  Status waited = segment.value()->Barrier("allreduce");
  other.join();
  EXPECT_TRUE(waited.ok()) << waited.message();
  EXPECT_EQ(missing.rfind("waiting for rank 1 (local rank 1, pid " + std::to_string(::getpid()) + ")", 0), 0U)
      << missing;
  EXPECT_EQ(segment.value()->Missing(), "");
}

// With a barrier limit (the stall shutdown time), a rank still missing then is named.
TEST(ShmSegmentTest, ALateRankIsNamedAtTheBarrierLimit) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  std::unique_ptr<ShmSegment> late;
  std::thread other([&] {
    StatusOr<std::unique_ptr<ShmSegment>> segment =
        ShmSegment::Open(*store, testing::TestShmGroup(1, 2, milliseconds(300)), kSlot);
    ASSERT_TRUE(segment.ok()) << segment.status().message();
    late = std::move(segment).value();
  });
  ShmGroup group = testing::TestShmGroup(0, 2, milliseconds(300));
  group.barrier_limit = milliseconds(300);
  StatusOr<std::unique_ptr<ShmSegment>> segment = ShmSegment::Open(*store, group, kSlot);
  other.join();
  ASSERT_TRUE(segment.ok()) << segment.status().message();
  Status waited = segment.value()->Barrier("allreduce");
  EXPECT_EQ(waited.message(),
            "shared memory: allreduce: rank(s) 1 did not arrive within the stall shutdown time (300 ms, "
            "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS)");
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
  ASSERT_TRUE(
      store->Set("test/shm/name", "!reserving 64 MiB of shared memory: No space left on device").ok());
  ASSERT_TRUE(
      store->Set("test/shm/mapped/0", "!rank 0: reserving 64 MiB of shared memory: No space left on device")
          .ok());
  StatusOr<std::unique_ptr<ShmSegment>> segment =
      ShmSegment::Open(*store, testing::TestShmGroup(1, 2, milliseconds(2000)), kSlot);
  ASSERT_FALSE(segment.ok());
  EXPECT_NE(
      segment.status().message().find(
          "local rank 0 could not create it: reserving 64 MiB of shared memory: No space left on device"),
      std::string::npos)
      << segment.status().message();
}

// A store in a directory, for local ranks that are processes (fork): Set writes a file under a
// temporary name and renames it, Get polls. A Get of `stall_key`, when given, sets the key
// "stalled" and then never returns (a rank stuck there until it is killed). For these tests only.
class DirectoryStore : public KeyValueStore {
 public:
  explicit DirectoryStore(std::string dir, std::string stall_key = "")
      : dir_(std::move(dir)), stall_key_(std::move(stall_key)) {}
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
    if (!stall_key_.empty() && key == stall_key_) {
      (void)Set("stalled", "");
      while (true) ::pause();
    }
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
  std::string stall_key_;
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
  const std::set<std::string> before = testing::DevShmEntries();
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
  EXPECT_EQ(testing::NewHvdrunEntries(before, {::getpid(), child.pid}), std::vector<std::string>());
  std::filesystem::remove_all(dir);
}

// A local rank 0 SIGKILLed in the middle of the bootstrap (it has created the memory and accepted
// a local rank's connection, and is stuck reading that rank's pid from the store) leaves nothing
// in /dev/shm, and the other local rank fails at once, long before the timeout, with one line that
// says local rank 0 died.
TEST(ShmSegmentTest, ALocalRank0KilledWhileHandingOverLeavesNothing) {
  const std::string dir = ::testing::TempDir() + "/shm_kill0_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::set<std::string> before = testing::DevShmEntries();
  const auto timeout = std::chrono::seconds(30);
  ChildProcess child;
  child.pid = ::fork();
  ASSERT_GE(child.pid, 0);
  if (child.pid == 0) {
    DirectoryStore stalling(dir, "test/shm/pid/1");
    StatusOr<std::unique_ptr<ShmSegment>> segment =
        ShmSegment::Open(stalling, testing::TestShmGroup(0, 2, timeout), kSlot);
    ::_exit(segment.ok() ? 0 : 2);  // not reached: it stalls until it is killed
  }
  DirectoryStore store(dir);
  Status opened;
  std::thread other([&] {
    StatusOr<std::unique_ptr<ShmSegment>> segment =
        ShmSegment::Open(store, testing::TestShmGroup(1, 2, timeout), kSlot);
    opened = segment.ok() ? Status::Error("it opened") : segment.status();
  });
  ASSERT_TRUE(store.Get("stalled", timeout).ok());
  // Local rank 0 holds the memory, and nothing of it is in /dev/shm.
  EXPECT_TRUE(MapsMemfdOnly(child.pid)) << testing::ProcessMaps(child.pid);
  EXPECT_EQ(testing::NewHvdrunEntries(before, {::getpid(), child.pid}), std::vector<std::string>());
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(child.pid, SIGKILL), 0);
  other.join();
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_LT(waited, std::chrono::seconds(5));
  const std::string& message = opened.message();
  EXPECT_EQ(message.rfind("shared memory: local rank 0 (pid " + std::to_string(child.pid) +
                              ") died before it handed the segment over (",
                          0),
            0U)
      << message;
  EXPECT_NE(message.find("(HVDRUN_SHM=0 turns the shared-memory path off)"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(testing::NewHvdrunEntries(before, {::getpid(), child.pid}), std::vector<std::string>());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hvdrun
