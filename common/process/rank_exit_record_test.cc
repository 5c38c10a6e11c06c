#include "common/process/rank_exit_record.h"

#include <gtest/gtest.h>

namespace hvdrun {
namespace {

RankExitRecord SampleRecord() {
  RankExitRecord record;
  record.exit.rank = 12;
  record.exit.exit_code = 127;
  record.exit.spawn_error = protocol::SpawnError::kNotFound;
  record.exit.error = "command not found: 'x' (No such file or directory)";
  record.pid = 4242;
  record.stop_requested = true;
  record.end_unix_ns = 1'700'000'000'123'456'789ULL;
  return record;
}

TEST(RankExitRecord, KeysNameTheRank) {
  EXPECT_EQ(RankStartedKey(3), "hvdrun/started/3");
  EXPECT_EQ(RankExitKey(17), "hvdrun/exit/17");
  EXPECT_EQ(RankOfRecordKey(RankExitKey(17), kRankExitKeyPrefix), 17);
  EXPECT_EQ(RankOfRecordKey(RankStartedKey(0), kRankStartedKeyPrefix), 0);
  for (const char* other : {"hvdrun/exit/", "hvdrun/exit/x", "hvdrun/exit/-1", "hvdrun/exit/3 ",
                            "hvdrun/started/3", "hvdrun/exit/99999999999"}) {
    EXPECT_EQ(RankOfRecordKey(other, kRankExitKeyPrefix), -1) << other;
  }
}

TEST(RankExitRecord, StartRecordsAreTwoNumbers) {
  EXPECT_EQ(EncodeRankStartedRecord({4242, 4240}), "4242 4240");
  StatusOr<RankStartedRecord> decoded = DecodeRankStartedRecord("4242 4240");
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded.value(), (RankStartedRecord{4242, 4240}));
  for (const char* bad :
       {"", "4242", "4242 ", " 4242 4240", "4242  4240", "4242 4240 ", "0 1", "1 -1", "x y"}) {
    EXPECT_FALSE(DecodeRankStartedRecord(bad).ok()) << "'" << bad << "'";
  }
}

TEST(RankExitRecord, RoundTripsEveryField) {
  RankExitRecord record = SampleRecord();
  StatusOr<RankExitRecord> decoded = DecodeRankExitRecord(EncodeRankExitRecord(record));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded.value(), record);

  RankExitRecord signalled;
  signalled.exit.rank = 0;
  signalled.exit.signal = 15;
  signalled.exit.exit_code = 143;
  decoded = DecodeRankExitRecord(EncodeRankExitRecord(signalled));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded.value(), signalled);
}

TEST(RankExitRecord, EveryTruncationAndExtraByteIsRefused) {
  std::string bytes = EncodeRankExitRecord(SampleRecord());
  for (size_t length = 0; length < bytes.size(); ++length) {
    EXPECT_FALSE(DecodeRankExitRecord(bytes.substr(0, length)).ok()) << length;
  }
  EXPECT_FALSE(DecodeRankExitRecord(bytes + "x").ok());
}

TEST(RankExitRecord, OtherVersionsAndUnknownStartFailuresAreRefused) {
  std::string bytes = EncodeRankExitRecord(SampleRecord());
  std::string other_version = bytes;
  other_version[0] = 2;
  StatusOr<RankExitRecord> decoded = DecodeRankExitRecord(other_version);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("version 2"), std::string::npos) << decoded.status().message();

  std::string bad_spawn = bytes;
  bad_spawn[1 + 4 * 4] = 9;  // after version, rank, pid, exit code, signal
  EXPECT_FALSE(DecodeRankExitRecord(bad_spawn).ok());
}

}  // namespace
}  // namespace hvdrun
