#include "runtime/negotiation/negotiation_message.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace hvdrun {
namespace {

TEST(CountedFields, SumsOfEveryRanksWordsCountTheRanksPerField) {
  for (int ranks : {1, 2, 3, 4, 7, 8, 255, 256}) {
    const size_t fields = 1030;
    std::vector<CountedFields> per_rank;
    std::mt19937 random(static_cast<unsigned>(ranks));
    std::vector<int> expected(fields, 0);
    for (int rank = 0; rank < ranks; ++rank) {
      CountedFields mine(fields, ranks);
      for (size_t field = 0; field < fields; ++field) {
        if (random() % 3 == 0) {
          mine.Set(field);
          ++expected[field];
        }
      }
      per_rank.push_back(mine);
    }
    CountedFields sum(fields, ranks);
    for (const CountedFields& mine : per_rank) {
      ASSERT_EQ(mine.words().size(), sum.words().size());
      for (size_t word = 0; word < sum.words().size(); ++word) {
        ASSERT_GE(mine.words()[word], 0) << "the sign bit is never used";
        sum.words()[word] += mine.words()[word];
      }
    }
    for (size_t field = 0; field < fields; ++field) {
      ASSERT_EQ(sum.Count(field), expected[field]) << ranks << " ranks, field " << field;
    }
  }
}

TEST(CountedFields, TwoRanksPackThirtyOneFieldsPerWord) {
  CountedFields fields(4 + 1024, 2);
  EXPECT_EQ(fields.words().size(), (4 + 1024 + 30) / 31);
  fields.Set(1027);
  EXPECT_EQ(fields.Count(1027), 1);
  EXPECT_EQ(fields.Count(1026), 0);
  fields.Clear();
  EXPECT_EQ(fields.Count(1027), 0);
}

TensorRequest Req(std::string name, DataType type, ReduceOp op, uint64_t count) {
  TensorRequest request;
  request.name = std::move(name);
  request.type = type;
  request.op = op;
  request.count = count;
  return request;
}

TEST(Announcements, RoundTrip) {
  TensorRequest broadcast = Req("layer1.bias", DataType::kBFloat16, ReduceOp::kSum, 7);
  broadcast.kind = CollectiveKind::kBroadcast;
  broadcast.root = 3;
  TensorRequest compressed = Req("conv1.weight", DataType::kFloat32, ReduceOp::kAverage, 9408);
  compressed.compression = CompressionFormat::kFloat8E5M2;
  TensorRequest rows = Req("embeddings", DataType::kInt64, ReduceOp::kSum, 12);
  rows.kind = CollectiveKind::kAllgatherv;
  rows.row = 6;
  rows.shape = {2, 2, 3};
  TensorRequest exchange = Req("tokens", DataType::kFloat16, ReduceOp::kSum, 40);
  exchange.kind = CollectiveKind::kAlltoallv;
  exchange.row = 4;
  compressed.shape = {64, 3, 7, 7};
  const std::vector<Announcement> announcements = {
      {Announcement::Kind::kRequest, compressed},
      {Announcement::Kind::kInvalidate, Req("fc.weight", DataType::kFloat16, ReduceOp::kSum, 1)},
      {Announcement::Kind::kProbe, broadcast},
      {Announcement::Kind::kRequest, rows},
      {Announcement::Kind::kRequest, exchange},
      {Announcement::Kind::kJoin, Req("", DataType::kFloat32, ReduceOp::kSum, 12)},
      {Announcement::Kind::kRequest, Req("", DataType::kInt64, ReduceOp::kMax, 0)},
  };
  StatusOr<std::vector<Announcement>> decoded = DecodeAnnouncements(EncodeAnnouncements(announcements));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded.value(), announcements);
  EXPECT_TRUE(DecodeAnnouncements("").ok());
}

TEST(Announcements, MalformedBytesAreErrorsNamingTheEntry) {
  const std::string bytes = EncodeAnnouncements(
      {{Announcement::Kind::kRequest, Req("a", DataType::kFloat32, ReduceOp::kSum, 1)},
       {Announcement::Kind::kRequest, Req("bcd", DataType::kFloat32, ReduceOp::kSum, 1)}});
  StatusOr<std::vector<Announcement>> cut = DecodeAnnouncements(bytes.substr(0, bytes.size() - 1));
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().message(), "negotiation: announcement 1's name of 3 bytes is cut short");
  StatusOr<std::vector<Announcement>> short_header = DecodeAnnouncements(bytes.substr(0, 10));
  ASSERT_FALSE(short_header.ok());
  EXPECT_EQ(short_header.status().message(), "negotiation: announcement 0 is cut short at byte 0");
  std::string bad_type = bytes;
  bad_type[2] = 99;
  StatusOr<std::vector<Announcement>> unknown = DecodeAnnouncements(bad_type);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(
      unknown.status().message(),
      "negotiation: announcement 0 has an unknown kind, collective, data type, operation or compression");
  std::string bad_compression = bytes;
  bad_compression[4] = 42;
  EXPECT_FALSE(DecodeAnnouncements(bad_compression).ok());
}

TEST(Announcements, ShapesTravelAndACutShapeIsAnError) {
  TensorRequest shaped = Req("w", DataType::kFloat32, ReduceOp::kSum, 6);
  shaped.shape = {2, 3};
  const std::string bytes = EncodeAnnouncements({{Announcement::Kind::kRequest, shaped}});
  StatusOr<std::vector<Announcement>> decoded = DecodeAnnouncements(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded.value().at(0).request.shape, (std::vector<int64_t>{2, 3}));
  StatusOr<std::vector<Announcement>> cut = DecodeAnnouncements(bytes.substr(0, bytes.size() - 1));
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().message(), "negotiation: announcement 0's shape of 2 dimensions is cut short");
  TensorRequest transposed = shaped;
  transposed.shape = {3, 2};
  EXPECT_FALSE(transposed.Matches(shaped)) << "the same count in another shape is another request";
  TensorRequest gathered = shaped;
  gathered.kind = CollectiveKind::kAllgatherv;
  gathered.row = 3;
  TensorRequest longer = gathered;
  longer.shape = {5, 3};
  EXPECT_TRUE(gathered.Matches(longer)) << "an allgather's first dimension may differ";
  longer.shape = {5, 3, 1};
  EXPECT_FALSE(gathered.Matches(longer)) << "but not its number of dimensions";
}

}  // namespace
}  // namespace hvdrun
