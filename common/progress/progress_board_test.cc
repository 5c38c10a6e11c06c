#include "common/progress/progress_board.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace hvdrun::progress {
namespace {

using protocol::CollectivePhase;
using protocol::FlightRecord;
using protocol::RankProgress;

class ProgressBoardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "progress_board_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path() const { return (dir_ / "rank0").string(); }

  std::filesystem::path dir_;
};

RankProgress Read(const std::string& path, bool with_records = true) {
  RankProgress progress;
  Status status = ReadProgressBoard(path, with_records, &progress);
  EXPECT_TRUE(status.ok()) << status.message();
  return progress;
}

TEST_F(ProgressBoardTest, PublishesEveryPhaseWithItsTime) {
  StatusOr<std::unique_ptr<ProgressBoard>> board = ProgressBoard::Create(Path(), 8);
  ASSERT_TRUE(board.ok()) << board.status().message();
  const int64_t start = UnixMillisNow();
  const uint64_t first = board.value()->Submitted("grad.fc", "allreduce", 4096, 0);
  const uint64_t second = board.value()->Submitted("grad.conv1", "allreduce", 64, 0);
  EXPECT_EQ(first, 1u);
  EXPECT_EQ(second, 2u);
  board.value()->Advance(first, CollectivePhase::kNegotiated);
  board.value()->Advance(first, CollectivePhase::kInBackend);

  RankProgress progress = Read(Path());
  EXPECT_TRUE(progress.board_read);
  EXPECT_EQ(progress.completed, 0u);
  EXPECT_EQ(progress.pending, 2u);
  EXPECT_EQ(progress.oldest_pending_name, "grad.fc");
  EXPECT_GE(progress.oldest_pending_since_unix_ms, start - 10);
  EXPECT_TRUE(progress.in_backend);
  EXPECT_EQ(progress.backend_name, "grad.fc");
  EXPECT_EQ(progress.backend_op, "allreduce");
  EXPECT_EQ(progress.backend_bytes, 4096u);
  ASSERT_EQ(progress.records.size(), 2u);
  EXPECT_EQ(progress.records[0].phase, CollectivePhase::kInBackend);
  EXPECT_GT(progress.records[0].backend_unix_ms, 0);
  EXPECT_EQ(progress.records[1].phase, CollectivePhase::kSubmitted);
  EXPECT_EQ(progress.records[1].negotiated_unix_ms, 0);

  board.value()->Advance(first, CollectivePhase::kDone);
  board.value()->Advance(second, CollectivePhase::kFailed);
  progress = Read(Path(), /*with_records=*/false);
  EXPECT_EQ(progress.completed, 1u);
  EXPECT_EQ(progress.failed, 1u);
  EXPECT_EQ(progress.pending, 0u);
  EXPECT_EQ(progress.last_completed_name, "grad.fc");
  EXPECT_GE(progress.last_completed_unix_ms, start - 10);
  EXPECT_FALSE(progress.in_backend);
  EXPECT_TRUE(progress.oldest_pending_name.empty());
  EXPECT_TRUE(progress.records.empty());
}

TEST_F(ProgressBoardTest, TheRingKeepsTheLastCollectivesAndCutsLongNames) {
  StatusOr<std::unique_ptr<ProgressBoard>> board = ProgressBoard::Create(Path(), 4);
  ASSERT_TRUE(board.ok()) << board.status().message();
  for (int i = 1; i <= 10; ++i) {
    const uint64_t sequence = board.value()->Submitted("t" + std::to_string(i), "broadcast", 4, 0);
    board.value()->Advance(sequence, CollectivePhase::kDone);
  }
  board.value()->Submitted(std::string(200, 'x'), "allgather", 8, 0);
  RankProgress progress = Read(Path());
  EXPECT_EQ(progress.completed, 10u);
  EXPECT_EQ(progress.pending, 1u);
  ASSERT_EQ(progress.records.size(), 4u);
  EXPECT_EQ(progress.records[0].sequence, 8u);
  EXPECT_EQ(progress.records[0].name, "t8");
  EXPECT_EQ(progress.records[2].name, "t10");
  EXPECT_EQ(progress.records[3].name, std::string(kNameBytes, 'x'));
  EXPECT_EQ(progress.last_completed_name, "t10");
  // A collective the ring dropped still counts.
  board.value()->Advance(1, CollectivePhase::kDone);
  EXPECT_EQ(Read(Path()).completed, 11u);
}

// A writer thread rewrites the records as fast as it can; every record the reader keeps must be
// one the writer wrote whole: its name, op and bytes all derive from its sequence.
TEST_F(ProgressBoardTest, AReaderNeverSeesATornRecord) {
  StatusOr<std::unique_ptr<ProgressBoard>> board = ProgressBoard::Create(Path(), 4);
  ASSERT_TRUE(board.ok()) << board.status().message();
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (uint64_t i = 1; !stop.load(); ++i) {
      const std::string text = std::to_string(i);
      const uint64_t sequence =
          board.value()->Submitted(std::string(kNameBytes, text.back()), text, i * 3, 0);
      board.value()->Advance(sequence, CollectivePhase::kInBackend);
      board.value()->Advance(sequence, CollectivePhase::kDone);
    }
  });
  uint64_t checked = 0;
  for (int round = 0; round < 2000; ++round) {
    RankProgress progress;
    if (!ReadProgressBoard(Path(), true, &progress).ok()) continue;
    for (const FlightRecord& record : progress.records) {
      const std::string text = std::to_string(record.sequence);
      ASSERT_EQ(record.op, text);
      ASSERT_EQ(record.bytes, record.sequence * 3);
      ASSERT_EQ(record.name, std::string(kNameBytes, text.back()));
      if (record.phase == CollectivePhase::kDone) {
        ASSERT_GT(record.backend_unix_ms, 0);
      }
      ++checked;
    }
  }
  stop = true;
  writer.join();
  EXPECT_GT(checked, 1000u);
}

TEST_F(ProgressBoardTest, WhatIsNotABoardIsRefused) {
  RankProgress progress;
  progress.rank = 3;
  EXPECT_FALSE(ReadProgressBoard(Path(), false, &progress).ok());  // missing
  { std::ofstream create(Path()); }
  std::filesystem::resize_file(Path(), BoardBytes(2));  // zeros: no magic
  Status status = ReadProgressBoard(Path(), false, &progress);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "'" + Path() + "' is not a progress board of this version");
  EXPECT_FALSE(progress.board_read);
  EXPECT_EQ(progress.rank, 3);
  EXPECT_FALSE(ProgressBoard::Create(Path(), 0).ok());
  EXPECT_FALSE(ProgressBoard::Create(Path(), kMaxRecords + 1).ok());
}

}  // namespace
}  // namespace hvdrun::progress
