// The timeline of a Runtime that negotiates (RuntimeOptions::timeline): 2 ranks as threads over
// real TCP (Gloo), each writing its own file, merged as hvdrun merges them.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/timeline/timeline_merge.h"
#include "hvdrun/runtime.h"
#include "runtime/test_job.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun {
namespace {

using nlohmann::json;

json ReadTrace(const std::string& path) {
  json trace = json::parse(e2e::ReadFileBytes(path), nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(trace.is_array()) << path << " is not a JSON array:\n" << e2e::ReadFileBytes(path);
  return trace.is_array() ? trace : json::array();
}

// How many events of each name the trace holds.
std::map<std::string, int> CountByName(const json& trace) {
  std::map<std::string, int> counts;
  for (const json& event : trace) ++counts[event.value("name", "")];
  return counts;
}

// A store that keeps the timeline pieces sent to it, as hvdrun's rendezvous service writes them.
class PieceCollectingStore : public KeyValueStore {
 public:
  Status Set(const std::string& key, const std::string& value) override { return store_->Set(key, value); }
  StatusOr<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) override {
    return store_->Get(key, timeout);
  }
  Status Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    return store_->Wait(keys, timeout);
  }
  StatusOr<int64_t> Add(const std::string& key, int64_t delta) override { return store_->Add(key, delta); }
  StatusOr<std::string> CompareAndSet(const std::string& key, const std::string& expected,
                                      const std::string& desired) override {
    return store_->CompareAndSet(key, expected, desired);
  }
  Status Delete(const std::string& key) override { return store_->Delete(key); }
  Status SendTimelinePiece(int rank, uint64_t offset, const std::string& data) override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string& copy = copies_[rank];
    if (offset > copy.size()) return Status::Error("a piece beyond the end");
    copy.resize(offset);
    copy += data;
    return Status::Ok();
  }
  std::string Copy(int rank) {
    std::lock_guard<std::mutex> lock(mutex_);
    return copies_[rank];
  }

 private:
  std::shared_ptr<KeyValueStore> store_ = NewInMemoryStore();
  std::mutex mutex_;
  std::map<int, std::string> copies_;
};

// Each rank: three steps of eight named slices of one array (reduced in place once cached) and of
// eight slices with gaps between them (copied through the fusion buffer), and one broadcast.
void RunSteps(Runtime& runtime) {
  constexpr size_t kSlice = 64;
  for (bool contiguous : {true, false}) {
    const size_t stride = contiguous ? kSlice : kSlice + 8;
    std::vector<float> arena(8 * stride, static_cast<float>(runtime.rank()));
    for (int step = 0; step < 3; ++step) {
      std::vector<CollectiveHandle> handles;
      for (size_t i = 0; i < 8; ++i) {
        float* data = arena.data() + i * stride;
        const std::string name = (contiguous ? "near." : "apart.") + std::to_string(i);
        handles.push_back(
            runtime.AllreduceAsync(name, data, data, kSlice, DataType::kFloat32, ReduceOp::kSum));
      }
      for (CollectiveHandle& handle : handles) ASSERT_TRUE(handle.Wait().ok());
    }
  }
  int32_t value = runtime.rank() == 0 ? 7 : 0;
  ASSERT_TRUE(runtime.Broadcast(&value, 1, DataType::kInt32, 0).ok());
  ASSERT_EQ(value, 7);
  // An alltoall of uneven splits and one of equal blocks: each a response of its own.
  std::vector<int32_t> send = {runtime.rank(), runtime.rank()};
  AlltoallResult uneven;
  ASSERT_TRUE(runtime.AlltoallAsync("uneven", send.data(), {1, 1}, DataType::kInt32, 1, &uneven).Wait().ok());
  std::vector<int32_t> equal(2);
  ASSERT_TRUE(runtime.AlltoallAsync("equal", send.data(), equal.data(), 1, DataType::kInt32).Wait().ok());
  ASSERT_EQ(equal, (std::vector<int32_t>{0, 1}));
}

void RunTimelineRanks(const std::shared_ptr<KeyValueStore>& store,
                      const std::function<TimelineSettings(int rank)>& timeline) {
  std::vector<std::thread> threads;
  threads.reserve(2);
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([rank, store, &timeline] {
      RuntimeOptions options = testing::TestOptions(rank, 2, store);
      options.order = CollectiveOrder::kNegotiated;
      options.timeline = timeline(rank);
      StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options);
      ASSERT_TRUE(runtime.ok()) << "rank " << rank << ": " << runtime.status().message();
      RunSteps(*runtime.value());
    });
  }
  for (std::thread& thread : threads) thread.join();
}

TEST(RuntimeTimeline, EveryRankRecordsItsResponsesWithHorovodsActivitiesAndTheMergeHoldsBoth) {
  e2e::ScratchDir dir;
  auto path = [&](int rank) { return dir.path() + "/timeline/rank-" + std::to_string(rank) + ".json"; };
  RunTimelineRanks(NewInMemoryStore(), [&](int rank) {
    TimelineSettings settings;
    settings.path = path(rank);  // its directory does not exist yet: the runtime creates it
    settings.host = "host" + std::to_string(rank);
    return settings;
  });

  for (int rank = 0; rank < 2; ++rank) {
    const json trace = ReadTrace(path(rank));
    const std::map<std::string, int> counts = CountByName(trace);
    uint64_t allreduced_bytes = 0;
    uint64_t allreduced_tensors = 0;
    for (const json& event : trace) {
      if (event.value("name", "") != "ALLREDUCE") continue;
      EXPECT_EQ(event["pid"], rank);
      EXPECT_GT(event["dur"].get<double>(), 0.0);
      allreduced_bytes += event["args"]["bytes"].get<uint64_t>();
      allreduced_tensors += event["args"]["tensors"].get<uint64_t>();
    }
    // 2 kinds x 3 steps x 8 slices x 64 floats, every one in some response.
    EXPECT_EQ(allreduced_tensors, 2U * 3 * 8) << "rank " << rank;
    EXPECT_EQ(allreduced_bytes, 2U * 3 * 8 * 64 * 4) << "rank " << rank;
    // Every response negotiates, queues and reduces through what carries allreduces (both ranks on
    // one host: its shared memory); broadcasts call Gloo; the slices with gaps are copied in and out.
    EXPECT_EQ(counts.at("NEGOTIATE_ALLREDUCE"), counts.at("ALLREDUCE"));
    EXPECT_EQ(counts.at("QUEUE"), counts.at("ALLREDUCE") + counts.at("BROADCAST") + counts.at("ALLTOALL"));
    EXPECT_EQ(counts.at("SHM_ALLREDUCE"), counts.at("ALLREDUCE"));
    EXPECT_GE(counts.at("MEMCPY_IN_FUSION_BUFFER"), 1);
    EXPECT_EQ(counts.at("MEMCPY_IN_FUSION_BUFFER"), counts.at("MEMCPY_OUT_FUSION_BUFFER"));
    EXPECT_EQ(counts.at("GLOO_BROADCAST"), 1);
    EXPECT_EQ(counts.at("ALLTOALL"), 2);
    EXPECT_EQ(counts.at("GLOO_ALLTOALL"), 2);
    EXPECT_EQ(counts.count("CYCLE_START"), 0U) << "cycles are marked only when asked";
  }

  const std::string merged = dir.path() + "/merged.json";
  StatusOr<TimelineMergeSummary> summary = MergeTimelines({path(0), path(1)}, merged);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  const json trace = ReadTrace(merged);
  std::map<int, int> responses_by_rank;
  for (const json& event : trace) {
    if (event.value("name", "") == "ALLREDUCE") ++responses_by_rank[event["pid"].get<int>()];
  }
  EXPECT_GT(responses_by_rank[0], 0);
  EXPECT_GT(responses_by_rank[1], 0);
  for (const RankTimelineSummary& rank : summary.value().ranks) EXPECT_TRUE(rank.complete) << rank.note;
}

TEST(RuntimeTimeline, MarkedCyclesAndAFileSentToTheLauncherThenDeleted) {
  e2e::ScratchDir dir;
  auto store = std::make_shared<PieceCollectingStore>();
  auto path = [&](int rank) { return dir.path() + "/rank-" + std::to_string(rank) + ".json"; };
  RunTimelineRanks(store, [&](int rank) {
    TimelineSettings settings;
    settings.path = path(rank);
    settings.mark_cycles = true;
    settings.send_to_launcher = rank == 1;
    return settings;
  });
  // Rank 0 keeps its file; rank 1 sent its own whole and deleted it.
  EXPECT_TRUE(std::filesystem::exists(path(0)));
  EXPECT_FALSE(std::filesystem::exists(path(1)));
  EXPECT_TRUE(store->Copy(0).empty());
  const std::string sent = store->Copy(1);
  const json trace = json::parse(sent, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(trace.is_array()) << sent;
  EXPECT_GT(CountByName(trace)["CYCLE_START"], 0);
  EXPECT_GT(CountByName(trace)["ALLREDUCE"], 0);
  EXPECT_GT(CountByName(ReadTrace(path(0)))["CYCLE_START"], 0);
}

TEST(RuntimeTimeline, RanksThatSendTheirFilesLeaveNoDirectoryBehind) {
  e2e::ScratchDir dir;
  auto store = std::make_shared<PieceCollectingStore>();
  const std::string timeline_dir = dir.path() + "/hvdrun-job-timeline";
  RunTimelineRanks(store, [&](int rank) {
    TimelineSettings settings;
    settings.path = timeline_dir + "/rank-" + std::to_string(rank) + ".json";
    settings.send_to_launcher = true;
    return settings;
  });
  EXPECT_FALSE(std::filesystem::exists(timeline_dir));
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_TRUE(json::parse(store->Copy(rank), nullptr, /*allow_exceptions=*/false).is_array()) << rank;
  }
}

// Runtime::StartTimeline and StopTimeline (Horovod's start_timeline, stop_timeline) while the job runs:
// what runs between them is in the file, complete when Stop returns; what runs after is not.
TEST(RuntimeTimeline, StartedAndStoppedWhileTheJobRuns) {
  e2e::ScratchDir dir;
  auto path = [&](int rank) { return dir.path() + "/started/rank-" + std::to_string(rank) + ".json"; };
  testing::RunRanks(
      2,
      [&](Runtime& runtime) {
        std::vector<float> values(16, 1.0F);
        ASSERT_TRUE(
            runtime.Allreduce("before", values.data(), values.data(), 16, DataType::kFloat32, ReduceOp::kSum)
                .ok());
        ASSERT_TRUE(runtime.StopTimeline().ok()) << "a stop without a start does nothing";
        const Status started = runtime.StartTimeline(path(runtime.rank()), /*mark_cycles=*/true);
        ASSERT_TRUE(started.ok()) << started.message();
        const Status again = runtime.StartTimeline(dir.path() + "/other.json");
        EXPECT_NE(again.message().find("already writes a timeline to '" + path(runtime.rank()) + "'"),
                  std::string::npos)
            << again.message();
        for (int step = 0; step < 3; ++step) {
          ASSERT_TRUE(
              runtime
                  .Allreduce("during", values.data(), values.data(), 16, DataType::kFloat32, ReduceOp::kSum)
                  .ok());
        }
        ASSERT_TRUE(runtime.Broadcast("broadcast", values.data(), 1, DataType::kFloat32, 0).ok());
        const Status stopped = runtime.StopTimeline();
        ASSERT_TRUE(stopped.ok()) << stopped.message();
        const std::string written = e2e::ReadFileBytes(path(runtime.rank()));
        ASSERT_TRUE(
            runtime.Allreduce("after", values.data(), values.data(), 16, DataType::kFloat32, ReduceOp::kSum)
                .ok());
        EXPECT_EQ(e2e::ReadFileBytes(path(runtime.rank())), written) << "nothing is written after the stop";
        const json trace = ReadTrace(path(runtime.rank()));
        std::map<std::string, int> names;
        for (const json& event : trace) {
          if (event.value("name", "") == "ALLREDUCE") {
            EXPECT_EQ(event["pid"], runtime.rank());
            for (const json& name : event["args"]["names"]) ++names[name.get<std::string>()];
          }
        }
        EXPECT_EQ(names, (std::map<std::string, int>{{"during", 3}})) << written;
        const std::map<std::string, int> counts = CountByName(trace);
        EXPECT_EQ(counts.count("BROADCAST"), 1U);
        EXPECT_GT(counts.count("CYCLE_START"), 0U);
        // Started again: the file is written anew.
        ASSERT_TRUE(runtime.StartTimeline(path(runtime.rank())).ok());
        ASSERT_TRUE(runtime.StopTimeline().ok());
        EXPECT_EQ(CountByName(ReadTrace(path(runtime.rank()))).count("ALLREDUCE"), 0U);
      },
      CollectiveOrder::kNegotiated);
}

TEST(RuntimeTimeline, AStartedTimelineIsRefusedInCallOrderAndBesideTheJobsOwn) {
  e2e::ScratchDir dir;
  testing::RunRanks(1, [&](Runtime& runtime) {
    EXPECT_NE(runtime.StartTimeline(dir.path() + "/t.json").message().find("CollectiveOrder::kNegotiated"),
              std::string::npos);
  });
  RuntimeOptions options = testing::TestOptions(0, 1, NewInMemoryStore());
  options.order = CollectiveOrder::kNegotiated;
  options.timeline.path = dir.path() + "/job.json";
  StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status().message();
  EXPECT_NE(runtime.value()->StartTimeline(dir.path() + "/t.json").message().find("--timeline-filename"),
            std::string::npos);
}

TEST(RuntimeTimeline, AFileThatCannotBeCreatedFailsInitNamingIt) {
  e2e::ScratchDir dir;
  const std::string blocker = dir.WriteFile("not-a-dir", "");
  RuntimeOptions options = testing::TestOptions(0, 1, NewInMemoryStore());
  options.order = CollectiveOrder::kNegotiated;
  options.timeline.path = blocker + "/rank-0.json";
  StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options);
  ASSERT_FALSE(runtime.ok());
  EXPECT_NE(runtime.status().message().find(blocker), std::string::npos) << runtime.status().message();
}

}  // namespace
}  // namespace hvdrun
