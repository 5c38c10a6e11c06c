#include "runtime/timeline/timeline.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/timeline/timeline_format.h"
#include "common/timeline/timeline_merge.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using std::chrono::microseconds;
using std::chrono::nanoseconds;

// The file as JSON; a parse error fails the test (and gives an empty array).
json ReadTrace(const std::string& path) {
  json trace = json::parse(e2e::ReadFileBytes(path), nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(trace.is_discarded()) << path << " is not valid JSON:\n" << e2e::ReadFileBytes(path);
  EXPECT_TRUE(trace.is_array() || trace.is_discarded());
  return trace.is_array() ? trace : json::array();
}

std::vector<json> EventsNamed(const json& trace, const std::string& name) {
  std::vector<json> found;
  for (const json& event : trace) {
    if (event.value("name", "") == name) found.push_back(event);
  }
  return found;
}

// A response of `tensors` tensors whose five activities take 10 us each from `start`.
TimelineResponse Response(Clock::time_point start, uint64_t bytes, uint64_t tensors) {
  TimelineResponse response;
  response.bytes = bytes;
  response.tensor_count = tensors;
  static const std::string kGloo = TimelineBackendActivity("gloo", kTimelineAllreduce);
  const std::string_view names[] = {kTimelineNegotiateAllreduce, kTimelineQueue, kTimelineMemcpyIn, kGloo,
                                    kTimelineMemcpyOut};
  for (const std::string_view name : names) {
    response.activities.push_back({name, start, start + microseconds(10)});
    start += microseconds(10);
  }
  return response;
}

class TimelineTest : public ::testing::Test {
 protected:
  std::unique_ptr<Timeline> OpenTimeline(TimelineOptions options) {
    if (options.path.empty()) options.path = path_;
    options.zero = zero_;
    StatusOr<std::unique_ptr<Timeline>> timeline = Timeline::Open(std::move(options));
    EXPECT_TRUE(timeline.ok()) << timeline.status().message();
    return timeline.ok() ? std::move(timeline).value() : nullptr;
  }

  e2e::ScratchDir scratch_;
  const std::string path_ = scratch_.path() + "/rank-0.json";
  const Clock::time_point zero_ = Clock::now();
};

TEST_F(TimelineTest, FileIsValidJsonAfterOpenAfterEachFlushAndAfterClose) {
  TimelineOptions options;
  options.rank = 3;
  options.host = "server1";
  options.flush_interval = std::chrono::hours(1);  // only Flush and Close write
  std::unique_ptr<Timeline> timeline = OpenTimeline(options);
  ASSERT_NE(timeline, nullptr);

  json trace = ReadTrace(path_);
  ASSERT_EQ(EventsNamed(trace, timeline_format::kProcessName).size(), 1U);
  EXPECT_EQ(EventsNamed(trace, timeline_format::kProcessName)[0]["args"]["name"], "rank 3 (server1)");
  EXPECT_EQ(EventsNamed(trace, timeline_format::kProcessSortIndex)[0]["args"]["sort_index"], 3);
  const std::vector<json> clock = EventsNamed(trace, timeline_format::kClockMetadata);
  ASSERT_EQ(clock.size(), 1U);
  const int64_t now_unix_us =
      std::chrono::duration_cast<microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(clock[0]["args"][timeline_format::kZeroUnixMicrosArg].get<double>(),
              static_cast<double>(now_unix_us), 60e6);

  timeline->Record(Response(zero_, 4096, 2));
  EXPECT_TRUE(EventsNamed(ReadTrace(path_), "ALLREDUCE").empty()) << "written before a flush";
  ASSERT_TRUE(timeline->Flush().ok());
  EXPECT_EQ(EventsNamed(ReadTrace(path_), "ALLREDUCE").size(), 1U);

  timeline->Record(Response(zero_ + microseconds(100), 8192, 1));
  ASSERT_TRUE(timeline->Close().ok());
  trace = ReadTrace(path_);
  EXPECT_EQ(EventsNamed(trace, "ALLREDUCE").size(), 2U);
  for (const json& event : trace) EXPECT_EQ(event["pid"], 3) << event;
  timeline->Record(Response(zero_, 1, 1));  // after Close: nothing
  EXPECT_TRUE(timeline->Close().ok());
  EXPECT_EQ(EventsNamed(ReadTrace(path_), "ALLREDUCE").size(), 2U);
}

TEST_F(TimelineTest, KilledRankLeavesValidJsonWithWhatItFlushed) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    TimelineOptions options;
    options.path = path_;
    options.zero = zero_;
    options.flush_interval = std::chrono::hours(1);
    StatusOr<std::unique_ptr<Timeline>> timeline = Timeline::Open(options);
    if (!timeline.ok()) ::_exit(1);
    for (int i = 0; i < 3; ++i) timeline.value()->Record(Response(zero_ + microseconds(100 * i), 4, 1));
    if (!timeline.value()->Flush().ok()) ::_exit(1);
    timeline.value()->Record(Response(zero_ + microseconds(1000), 4, 1));  // never flushed
    ::raise(SIGKILL);
    ::_exit(1);
  }
  int wait_status = 0;
  ASSERT_EQ(::waitpid(child, &wait_status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wait_status)) << "the child failed before it was killed";
  EXPECT_EQ(EventsNamed(ReadTrace(path_), "ALLREDUCE").size(), 3U);
}

TEST_F(TimelineTest, ResponsesCarryBytesTensorCountNamesAndTheirActivitiesInside) {
  std::unique_ptr<Timeline> timeline = OpenTimeline({});
  ASSERT_NE(timeline, nullptr);
  TimelineResponse response = Response(zero_ + nanoseconds(1500), 102760448, 161);
  response.tensor_names = {"conv1.weight", "fc.bias"};
  timeline->Record(response);
  ASSERT_TRUE(timeline->Close().ok());
  const json trace = ReadTrace(path_);

  const std::vector<json> outer = EventsNamed(trace, "ALLREDUCE");
  ASSERT_EQ(outer.size(), 1U);
  EXPECT_EQ(outer[0]["ph"], "X");
  EXPECT_DOUBLE_EQ(outer[0]["ts"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(outer[0]["dur"].get<double>(), 50.0);
  EXPECT_EQ(outer[0]["args"]["bytes"], 102760448);
  EXPECT_EQ(outer[0]["args"]["tensors"], 161);
  EXPECT_EQ(outer[0]["args"]["names"], json({"conv1.weight", "fc.bias"}));
  double expected_ts = 1.5;
  for (const char* name : {"NEGOTIATE_ALLREDUCE", "QUEUE", "MEMCPY_IN_FUSION_BUFFER", "GLOO_ALLREDUCE",
                           "MEMCPY_OUT_FUSION_BUFFER"}) {
    const std::vector<json> activity = EventsNamed(trace, name);
    ASSERT_EQ(activity.size(), 1U) << name;
    EXPECT_EQ(activity[0]["ph"], "X");
    EXPECT_EQ(activity[0]["tid"], outer[0]["tid"]) << name;
    EXPECT_DOUBLE_EQ(activity[0]["ts"].get<double>(), expected_ts) << name;
    EXPECT_DOUBLE_EQ(activity[0]["dur"].get<double>(), 10.0) << name;
    EXPECT_EQ(activity[0]["args"]["bytes"], 102760448) << name;
    EXPECT_EQ(activity[0]["args"]["tensors"], 161) << name;
    expected_ts += 10;
  }
  EXPECT_EQ(TimelineBackendActivity("nccl", "ALLREDUCE"), "NCCL_ALLREDUCE");
  EXPECT_EQ(TimelineBackendActivity("mpi", "ALLREDUCE"), "MPI_ALLREDUCE");
}

TEST_F(TimelineTest, OverlappingResponsesTakeSeparateLanesThatNeverOverlap) {
  std::unique_ptr<Timeline> timeline = OpenTimeline({});
  ASSERT_NE(timeline, nullptr);
  // Responses of 50 us starting every 20 us: up to three in flight at once.
  for (int i = 0; i < 20; ++i) timeline->Record(Response(zero_ + microseconds(20 * i), 4, 1));
  timeline->Record(Response(zero_ + microseconds(10000), 4, 1));
  ASSERT_TRUE(timeline->Close().ok());
  const json trace = ReadTrace(path_);

  std::map<int, std::vector<std::pair<double, double>>> lanes;
  for (const json& event : EventsNamed(trace, "ALLREDUCE")) {
    ASSERT_GE(event["tid"].get<int>(), 1);
    const double ts = event["ts"].get<double>();
    lanes[event["tid"].get<int>()].emplace_back(ts, ts + event["dur"].get<double>());
  }
  EXPECT_EQ(lanes.size(), 3U);
  for (auto& [tid, spans] : lanes) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) {
      EXPECT_LE(spans[i - 1].second, spans[i].first) << "lane " << tid;
    }
  }
  EXPECT_EQ(EventsNamed(trace, "ALLREDUCE").back()["tid"], 1) << "a free lane is reused";
  EXPECT_EQ(EventsNamed(trace, timeline_format::kThreadName).size(), 4U) << "cycle and three lanes";
}

TEST_F(TimelineTest, WriterThreadFlushesOnItsOwnAndTheFileParsesMidRun) {
  TimelineOptions options;
  options.flush_interval = std::chrono::milliseconds(10);
  std::unique_ptr<Timeline> timeline = OpenTimeline(options);
  ASSERT_NE(timeline, nullptr);
  timeline->Record(Response(zero_, 64, 1));
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
  while (EventsNamed(ReadTrace(path_), "ALLREDUCE").empty() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(EventsNamed(ReadTrace(path_), "ALLREDUCE").size(), 1U);
}

TEST_F(TimelineTest, ByteLimitDropsLaterEventsAndTheFileSaysHowMany) {
  TimelineOptions options;
  options.byte_limit = Timeline::kMinByteLimit;
  options.flush_bytes = 4096;  // many flushes before and after the limit
  std::unique_ptr<Timeline> timeline = OpenTimeline(options);
  ASSERT_NE(timeline, nullptr);
  constexpr int kResponses = 2000;  // ~6 events of ~150 bytes each: far past 64 KiB
  for (int i = 0; i < kResponses; ++i) {
    timeline->Record(Response(zero_ + microseconds(100 * i), 4, 1));
    if (i == kResponses / 2) {
      ASSERT_TRUE(timeline->Flush().ok());
      const std::vector<json> note = EventsNamed(ReadTrace(path_), timeline_format::kEventsDropped);
      ASSERT_EQ(note.size(), 1U) << "the note is there mid-run";
      EXPECT_GT(note[0]["args"][timeline_format::kDroppedEventsArg].get<uint64_t>(), 0U);
    }
  }
  ASSERT_TRUE(timeline->Close().ok());
  EXPECT_LE(std::filesystem::file_size(path_), options.byte_limit);
  const json trace = ReadTrace(path_);
  const std::vector<json> note = EventsNamed(trace, timeline_format::kEventsDropped);
  ASSERT_EQ(note.size(), 1U);
  EXPECT_EQ(trace.back(), note[0]) << "the note comes last";
  const uint64_t dropped = note[0]["args"][timeline_format::kDroppedEventsArg].get<uint64_t>();
  EXPECT_EQ(dropped, timeline->dropped_events());
  EXPECT_EQ(note[0]["args"][timeline_format::kByteLimitArg], options.byte_limit);
  size_t kept = 0;
  for (const json& event : trace) kept += event["ph"] == "X" ? 1 : 0;
  EXPECT_GT(kept, 0U);
  EXPECT_EQ(kept + dropped, kResponses * 6U);
}

TEST_F(TimelineTest, UnwritablePathGivesTheReasonAndNamesThePath) {
  TimelineOptions options;
  options.path = scratch_.path() + "/no-such-dir/tl.json";
  StatusOr<std::unique_ptr<Timeline>> timeline = Timeline::Open(options);
  ASSERT_FALSE(timeline.ok());
  EXPECT_EQ(timeline.status().message(),
            "cannot open timeline '" + options.path + "': No such file or directory");
  options.path = scratch_.path();
  EXPECT_EQ(Timeline::Open(options).status().message(),
            "cannot open timeline '" + options.path + "': Is a directory");
  options.path = path_;
  options.byte_limit = 1000;
  EXPECT_EQ(Timeline::Open(options).status().message(),
            "timeline byte limit 1000 is below the minimum 65536");
}

TEST_F(TimelineTest, CycleStartsOnlyWhenMarkingCycles) {
  std::unique_ptr<Timeline> timeline = OpenTimeline({});
  ASSERT_NE(timeline, nullptr);
  timeline->MarkCycle(zero_);
  ASSERT_TRUE(timeline->Close().ok());
  EXPECT_TRUE(EventsNamed(ReadTrace(path_), "CYCLE_START").empty());

  TimelineOptions options;
  options.mark_cycles = true;
  timeline = OpenTimeline(options);
  ASSERT_NE(timeline, nullptr);
  timeline->MarkCycle(zero_ + microseconds(7));
  ASSERT_TRUE(timeline->Close().ok());
  const std::vector<json> cycles = EventsNamed(ReadTrace(path_), "CYCLE_START");
  ASSERT_EQ(cycles.size(), 1U);
  EXPECT_EQ(cycles[0]["ph"], "i");
  EXPECT_EQ(cycles[0]["tid"], 0);
  EXPECT_DOUBLE_EQ(cycles[0]["ts"].get<double>(), 7.0);
}

TEST_F(TimelineTest, MarksAreProcessWideInstantsWithTheirNumbersAsArgs) {
  std::unique_ptr<Timeline> timeline = OpenTimeline({});  // marks need no mark_cycles
  ASSERT_NE(timeline, nullptr);
  timeline->Mark({"AUTOTUNE", {{"sample", 3}, {"cycle_time_ms", 2.5}, {"nan", std::nan("")}}},
                 zero_ + microseconds(42));
  ASSERT_TRUE(timeline->Close().ok());
  const std::vector<json> marks = EventsNamed(ReadTrace(path_), "AUTOTUNE");
  ASSERT_EQ(marks.size(), 1U);
  EXPECT_EQ(marks[0]["ph"], "i");
  EXPECT_EQ(marks[0]["s"], "p");
  EXPECT_EQ(marks[0]["tid"], 0);
  EXPECT_DOUBLE_EQ(marks[0]["ts"].get<double>(), 42.0);
  EXPECT_EQ(marks[0]["args"]["sample"], 3);
  EXPECT_DOUBLE_EQ(marks[0]["args"]["cycle_time_ms"].get<double>(), 2.5);
  EXPECT_TRUE(marks[0]["args"]["nan"].is_null());
}

TEST_F(TimelineTest, TensorNamesAreEscapedAndBounded) {
  std::unique_ptr<Timeline> timeline = OpenTimeline({});
  ASSERT_NE(timeline, nullptr);
  TimelineResponse response = Response(zero_ - microseconds(5), 4, 40);
  const std::string long_name(300, 'x');
  const std::vector<std::string> names = {"quote\"back\\slash", std::string("tab\tnul\0", 8), "caf\xc3\xa9",
                                          long_name};
  for (const std::string& name : names) response.tensor_names.emplace_back(name);
  while (response.tensor_names.size() < 40) response.tensor_names.emplace_back("more");
  timeline->Record(response);
  ASSERT_TRUE(timeline->Close().ok());
  const std::vector<json> outer = EventsNamed(ReadTrace(path_), "ALLREDUCE");
  ASSERT_EQ(outer.size(), 1U);
  EXPECT_DOUBLE_EQ(outer[0]["ts"].get<double>(), -5.0);
  const json& written = outer[0]["args"]["names"];
  ASSERT_EQ(written.size(), Timeline::kMaxTensorNames);
  EXPECT_EQ(written[0], "quote\"back\\slash");
  EXPECT_EQ(written[1], std::string("tab\tnul\0", 8));
  EXPECT_EQ(written[2], "caf??");
  EXPECT_EQ(written[3], std::string(Timeline::kMaxTensorNameBytes, 'x') + "...");
  EXPECT_EQ(outer[0]["args"]["tensors"], 40);
}

TEST_F(TimelineTest, TwoThreadsRecordAtOnce) {
  TimelineOptions options;
  options.flush_bytes = 2048;
  std::unique_ptr<Timeline> timeline = OpenTimeline(options);
  ASSERT_NE(timeline, nullptr);
  constexpr int kPerThread = 500;
  auto record = [&](int first) {
    for (int i = 0; i < kPerThread; ++i) {
      timeline->Record(Response(zero_ + microseconds(first + 100 * i), 4, 1));
    }
  };
  std::thread other(record, 50);
  record(0);
  other.join();
  ASSERT_TRUE(timeline->Close().ok());
  EXPECT_EQ(EventsNamed(ReadTrace(path_), "ALLREDUCE").size(), 2U * kPerThread);
}

// The writer and the merger together, as the launcher uses them: every rank's events, pid = rank.
TEST_F(TimelineTest, EveryRanksTimelineMergesIntoOneProcessPerRank) {
  std::vector<std::string> files;
  for (int rank = 0; rank < 3; ++rank) {
    TimelineOptions options;
    options.rank = rank;
    options.path = scratch_.path() + "/rank-" + std::to_string(rank) + ".json";
    files.push_back(options.path);
    std::unique_ptr<Timeline> timeline = OpenTimeline(options);
    ASSERT_NE(timeline, nullptr);
    for (int i = 0; i <= rank; ++i) timeline->Record(Response(zero_ + microseconds(100 * i), 4, 1));
    ASSERT_TRUE(timeline->Close().ok());
  }
  const std::string merged = scratch_.path() + "/timeline.json";
  StatusOr<TimelineMergeSummary> summary = MergeTimelines(files, merged);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  const json trace = ReadTrace(merged);
  std::map<int, int> responses;
  for (const json& event : EventsNamed(trace, "ALLREDUCE")) ++responses[event["pid"].get<int>()];
  EXPECT_EQ(responses, (std::map<int, int>{{0, 1}, {1, 2}, {2, 3}}));
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_TRUE(summary->ranks[rank].complete) << summary->ranks[rank].note;
    EXPECT_TRUE(summary->ranks[rank].zero_unix_micros.has_value());
  }
  EXPECT_LT(summary->zero_spread_micros, 10'000'000);
}

}  // namespace
}  // namespace hvdrun
