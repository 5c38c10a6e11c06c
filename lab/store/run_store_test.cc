#include "lab/store/run_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/e2e/scratch_dir.h"

namespace hvdrun::lab {
namespace {

namespace fs = std::filesystem;

RunRecord Record(bool ok, const std::string& error) {
  RunRecord record;
  record.ok = ok;
  record.error = error;
  record.exit_code = ok ? 0 : 3;
  record.duration_s = 1.5;
  record.started_at = "2024-01-01T00:00:00Z";
  record.command = {"-np", "2"};
  return record;
}

TEST(RunStore, ARunCountsOnlyOnceCommitted) {
  e2e::ScratchDir scratch;
  RunStore store(scratch.path() + "/exp");
  StatusOr<UniqueFd> lock = store.Lock();
  ASSERT_TRUE(lock.ok()) << lock.status().message();
  StatusOr<std::string> partial = store.BeginRun("cell-a", 1);
  ASSERT_TRUE(partial.ok()) << partial.status().message();
  EXPECT_EQ(partial.value(), store.RunDir("cell-a", 1) + ".partial");
  std::ofstream(partial.value() + "/stdout.log") << "half a run\n";
  EXPECT_FALSE(store.FindRun("cell-a", 1));

  ASSERT_TRUE(store.CommitRun("cell-a", 1, Record(false, "boom")).ok());
  std::optional<RunRecord> found = store.FindRun("cell-a", 1);
  ASSERT_TRUE(found);
  EXPECT_FALSE(found->ok);
  EXPECT_EQ(found->error, "boom");
  EXPECT_EQ(found->command, (std::vector<std::string>{"-np", "2"}));
  EXPECT_TRUE(fs::exists(store.RunDir("cell-a", 1) + "/stdout.log"));
  EXPECT_FALSE(fs::exists(partial.value()));

  // A second run replaces the first whole, in one rename.
  partial = store.BeginRun("cell-a", 1);
  ASSERT_TRUE(partial.ok());
  std::ofstream(partial.value() + "/new.log") << "second\n";
  ASSERT_TRUE(store.CommitRun("cell-a", 1, Record(true, "")).ok());
  found = store.FindRun("cell-a", 1);
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->ok);
  EXPECT_TRUE(fs::exists(store.RunDir("cell-a", 1) + "/new.log"));
  EXPECT_FALSE(fs::exists(store.RunDir("cell-a", 1) + "/stdout.log"));
  EXPECT_FALSE(fs::exists(partial.value()));
}

// The reason a run failed quotes hvdrun's last line, which may quote a rank's output: bytes that are
// not UTF-8 in it are written as U+FFFD, never fail the write.
TEST(RunStore, AReasonThatIsNotUtf8IsRecorded) {
  e2e::ScratchDir scratch;
  RunStore store(scratch.path() + "/exp");
  ASSERT_TRUE(store.BeginRun("cell-a", 1).ok());
  ASSERT_TRUE(store.CommitRun("cell-a", 1, Record(false, "rank 0: \xff\xfe garbage")).ok());
  std::optional<RunRecord> found = store.FindRun("cell-a", 1);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->error, "rank 0: \xef\xbf\xbd\xef\xbf\xbd garbage");
}

TEST(RunStore, AnInterruptedRunLeavesNothingThatCounts) {
  e2e::ScratchDir scratch;
  RunStore store(scratch.path());
  ASSERT_TRUE(store.BeginRun("c", 2).ok());
  store.DiscardRun("c", 2);
  EXPECT_FALSE(fs::exists(store.RunDir("c", 2) + ".partial"));
  EXPECT_FALSE(store.FindRun("c", 2));
  // A leftover partial directory from a killed hvdrun-lab is replaced by the next attempt.
  StatusOr<std::string> partial = store.BeginRun("c", 2);
  ASSERT_TRUE(partial.ok());
  std::ofstream(partial.value() + "/stale") << "x";
  partial = store.BeginRun("c", 2);
  ASSERT_TRUE(partial.ok());
  EXPECT_TRUE(fs::is_empty(partial.value()));
}

TEST(RunStore, ADamagedRecordDoesNotCount) {
  e2e::ScratchDir scratch;
  RunStore store(scratch.path());
  fs::create_directories(store.RunDir("c", 1));
  std::ofstream(store.RunDir("c", 1) + "/run.json") << "{\"status\": \"ok\"";
  EXPECT_FALSE(store.FindRun("c", 1));
}

TEST(RunStore, OneProcessAtATime) {
  e2e::ScratchDir scratch;
  RunStore store(scratch.path() + "/exp");
  StatusOr<UniqueFd> first = store.Lock();
  ASSERT_TRUE(first.ok());
  StatusOr<UniqueFd> second = store.Lock();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(
      second.status().message(),
      store.dir() + ": another hvdrun-lab is running this experiment (it holds " + store.dir() + "/.lock)");
}

TEST(RunRecord, JsonRoundTripAndErrors) {
  RunRecord record = Record(false, "timed out");
  record.timed_out = true;
  StatusOr<RunRecord> back = RunRecordFromJson(RunRecordToJson(record));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->timed_out);
  EXPECT_EQ(back->exit_code, 3);
  EXPECT_DOUBLE_EQ(back->duration_s, 1.5);
  nlohmann::json json = RunRecordToJson(record);
  json.erase("duration_s");
  EXPECT_EQ(RunRecordFromJson(json).status().message(),
            "\"duration_s\" is missing or not a number of seconds from 0 to 1e+09");
  EXPECT_EQ(RunRecordFromJson(nlohmann::json::array()).status().message(), "not a JSON object");
  // Out of range: never shown as a wrapped whole number or a run of ages.
  json = RunRecordToJson(record);
  json["exit_code"] = 1e12;
  EXPECT_EQ(RunRecordFromJson(json).status().message(),
            "\"exit_code\" is missing or not a whole number from -1 to 255");
  json = RunRecordToJson(record);
  json["duration_s"] = -1;
  EXPECT_EQ(RunRecordFromJson(json).status().message(),
            "\"duration_s\" is missing or not a number of seconds from 0 to 1e+09");
}

}  // namespace
}  // namespace hvdrun::lab
