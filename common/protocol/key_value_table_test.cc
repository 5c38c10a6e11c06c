// The store's rules, once for both of its homes (the rendezvous service and InMemoryStore, whose
// tests cover how each waits and reports).
#include "common/protocol/key_value_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hvdrun {
namespace {

using rendezvous::AddRequest;
using rendezvous::CompareAndSetRequest;
using rendezvous::DeleteRequest;
using rendezvous::ErrorResponse;
using rendezvous::GetRequest;
using rendezvous::IntResponse;
using rendezvous::Message;
using rendezvous::OkResponse;
using rendezvous::SetRequest;
using rendezvous::ValueResponse;
using rendezvous::WaitRequest;

// The answer, which the test expects to exist.
Message AnswerOf(KeyValueTable& table, const Message& request) {
  std::optional<Message> answer = table.Answer(request);
  EXPECT_TRUE(answer.has_value()) << rendezvous::MessageName(request) << " got no answer";
  return answer.value_or(ErrorResponse{"no answer"});
}

// The error line of an ErrorResponse answer; "" for any other answer.
std::string ErrorOf(KeyValueTable& table, const Message& request) {
  Message answer = AnswerOf(table, request);
  const auto* error = std::get_if<ErrorResponse>(&answer);
  return error == nullptr ? "" : error->message;
}

Message Value(std::string value) { return ValueResponse{std::move(value)}; }

TEST(KeyValueTable, SetReplacesAndGetReturnsAnyBytes) {
  KeyValueTable table;
  std::string binary("\0\xff\n value", 9);
  EXPECT_EQ(AnswerOf(table, SetRequest{"gloo/0", binary}), Message(OkResponse{}));
  EXPECT_EQ(AnswerOf(table, GetRequest{"gloo/0", 0}), Value(binary));
  EXPECT_EQ(AnswerOf(table, SetRequest{"gloo/0", ""}), Message(OkResponse{}));
  EXPECT_EQ(AnswerOf(table, GetRequest{"gloo/0", 0}), Value(""));
  EXPECT_EQ(AnswerOf(table, SetRequest{"", "the empty key"}), Message(OkResponse{}));
  EXPECT_EQ(AnswerOf(table, GetRequest{"", 0}), Value("the empty key"));
}

TEST(KeyValueTable, AGetOfAnAbsentKeyWaitsUnlessItsTimeoutIsZero) {
  KeyValueTable table;
  EXPECT_FALSE(table.Answer(GetRequest{"gloo/3", 30000}).has_value());
  EXPECT_EQ(ErrorOf(table, GetRequest{"gloo/3", 0}), "timed out after 0 ms waiting for key 'gloo/3'");
  EXPECT_EQ(table.TimedOut(GetRequest{"gloo/3", 30000}),
            Message(ErrorResponse{"timed out after 30 s waiting for key 'gloo/3'"}));
  ASSERT_EQ(AnswerOf(table, SetRequest{"gloo/3", "address"}), Message(OkResponse{}));
  EXPECT_EQ(table.Answer(GetRequest{"gloo/3", 30000}), Value("address"));
}

TEST(KeyValueTable, AWaitIsAnsweredOnceEveryKeyExists) {
  KeyValueTable table;
  EXPECT_EQ(AnswerOf(table, WaitRequest{{}, 0}), Message(OkResponse{}));
  WaitRequest wait{{"a", "b"}, 5000};
  EXPECT_FALSE(table.Answer(wait).has_value());
  ASSERT_EQ(AnswerOf(table, SetRequest{"a", "1"}), Message(OkResponse{}));
  EXPECT_FALSE(table.Answer(wait).has_value());
  EXPECT_EQ(table.TimedOut(wait),
            Message(ErrorResponse{"timed out after 5 s waiting for 2 keys; 1 still missing: 'b'"}));
  ASSERT_EQ(AnswerOf(table, SetRequest{"b", "1"}), Message(OkResponse{}));
  EXPECT_EQ(table.Answer(wait), Message(OkResponse{}));
}

TEST(KeyValueTable, AWaitTimeoutNamesSixteenMissingKeysAndCountsTheRest) {
  KeyValueTable table;
  std::vector<std::string> keys(20);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = "k" + std::to_string(i);
  ASSERT_EQ(AnswerOf(table, SetRequest{"k0", ""}), Message(OkResponse{}));
  std::string expected = "timed out after 0 ms waiting for 20 keys; 19 still missing: 'k1'";
  for (int i = 2; i <= 16; ++i) expected += ", 'k" + std::to_string(i) + "'";
  EXPECT_EQ(ErrorOf(table, WaitRequest{keys, 0}), expected + " and 3 more");
  EXPECT_EQ(table.TimedOut(WaitRequest{{"x"}, 1500}),
            Message(ErrorResponse{"timed out after 1.5 s waiting for 1 keys; 1 still missing: 'x'"}));
}

TEST(KeyValueTable, AddCountsFromZero) {
  KeyValueTable table;
  EXPECT_EQ(AnswerOf(table, AddRequest{"n", 5}), Message(IntResponse{5}));
  EXPECT_EQ(AnswerOf(table, AddRequest{"n", -7}), Message(IntResponse{-2}));
  EXPECT_EQ(AnswerOf(table, GetRequest{"n", 0}), Value("-2"));
  ASSERT_EQ(AnswerOf(table, SetRequest{"m", "40"}), Message(OkResponse{}));
  EXPECT_EQ(AnswerOf(table, AddRequest{"m", 2}), Message(IntResponse{42}));
}

TEST(KeyValueTable, AddToANonNumberOrPastOverflowFailsAndLeavesTheValue) {
  KeyValueTable table;
  for (const char* text : {"abc", "12abc", "", " 5", "+5", "1.5", "99999999999999999999"}) {
    ASSERT_EQ(AnswerOf(table, SetRequest{"text", text}), Message(OkResponse{}));
    EXPECT_EQ(ErrorOf(table, AddRequest{"text", 1}),
              "cannot add to key 'text': its value '" + std::string(text) + "' is not a whole number");
    EXPECT_EQ(AnswerOf(table, GetRequest{"text", 0}), Value(text));
  }
  ASSERT_EQ(AnswerOf(table, AddRequest{"big", INT64_MAX}), Message(IntResponse{INT64_MAX}));
  EXPECT_EQ(ErrorOf(table, AddRequest{"big", 1}), "cannot add 1 to key 'big': the result overflows 64 bits");
  EXPECT_EQ(ErrorOf(table, AddRequest{"big", INT64_MIN}), "");  // back to -1
  EXPECT_EQ(AnswerOf(table, GetRequest{"big", 0}), Value("-1"));
}

TEST(KeyValueTable, CompareAndSet) {
  KeyValueTable table;
  // Absent counts as equal to an empty `expected`.
  EXPECT_EQ(AnswerOf(table, CompareAndSetRequest{"k", "", "first"}), Value("first"));
  // A mismatch stores nothing and returns the value stored.
  EXPECT_EQ(AnswerOf(table, CompareAndSetRequest{"k", "", "second"}), Value("first"));
  EXPECT_EQ(AnswerOf(table, CompareAndSetRequest{"k", "wrong", "second"}), Value("first"));
  EXPECT_EQ(AnswerOf(table, CompareAndSetRequest{"k", "first", "second"}), Value("second"));
  EXPECT_EQ(AnswerOf(table, GetRequest{"k", 0}), Value("second"));
  // Absent with a non-empty `expected`: nothing stored, the empty value returned.
  EXPECT_EQ(AnswerOf(table, CompareAndSetRequest{"absent", "x", "y"}), Value(""));
  EXPECT_EQ(ErrorOf(table, GetRequest{"absent", 0}), "timed out after 0 ms waiting for key 'absent'");
}

TEST(KeyValueTable, DeleteRemovesTheKeyWhetherOrNotItExisted) {
  KeyValueTable table;
  ASSERT_EQ(AnswerOf(table, SetRequest{"k", "v"}), Message(OkResponse{}));
  EXPECT_EQ(AnswerOf(table, DeleteRequest{"k"}), Message(OkResponse{}));
  EXPECT_FALSE(table.Answer(GetRequest{"k", 10}).has_value());
  EXPECT_EQ(AnswerOf(table, DeleteRequest{"never-set"}), Message(OkResponse{}));
  EXPECT_EQ(AnswerOf(table, AddRequest{"k", 2}), Message(IntResponse{2}));  // counts from 0 again
}

TEST(KeyValueTable, LimitsRefuseWhatWouldBreakThemAndChangeNothing) {
  KeyValueLimits limits;
  limits.max_key_bytes = 16;
  limits.max_value_bytes = 100;
  limits.max_keys = 3;
  limits.max_total_bytes = 120;
  limits.max_wait_keys = 2;
  KeyValueTable table(limits);
  std::string long_key(17, 'k');
  std::string key_error = "key '" + long_key + "' of 17 bytes exceeds the limit of 16 bytes";
  EXPECT_EQ(ErrorOf(table, SetRequest{long_key, "v"}), key_error);
  EXPECT_EQ(ErrorOf(table, GetRequest{long_key, 1000}), key_error);
  EXPECT_EQ(ErrorOf(table, WaitRequest{{"ok", long_key}, 1000}), key_error);
  EXPECT_EQ(ErrorOf(table, AddRequest{long_key, 1}), key_error);
  EXPECT_EQ(ErrorOf(table, CompareAndSetRequest{long_key, "", "v"}), key_error);
  EXPECT_EQ(ErrorOf(table, DeleteRequest{long_key}), key_error);
  EXPECT_EQ(ErrorOf(table, SetRequest{"k", std::string(101, 'v')}),
            "value for key 'k', of 101 bytes exceeds the limit of 100 bytes");
  EXPECT_EQ(ErrorOf(table, WaitRequest{{"a", "b", "c"}, 1000}), "wait for 3 keys exceeds the limit of 2");
  EXPECT_EQ(table.version(), 0u);

  ASSERT_EQ(AnswerOf(table, SetRequest{"a", std::string(100, 'v')}), Message(OkResponse{}));
  EXPECT_EQ(ErrorOf(table, SetRequest{"b", std::string(20, 'v')}),
            "cannot store key 'b': the store would exceed its limit of 120 bytes");
  ASSERT_EQ(AnswerOf(table, SetRequest{"b", "1"}), Message(OkResponse{}));
  ASSERT_EQ(AnswerOf(table, SetRequest{"c", "1"}), Message(OkResponse{}));
  EXPECT_EQ(ErrorOf(table, SetRequest{"d", "1"}), "cannot add key 'd': the store holds 3 keys, its limit");
  EXPECT_EQ(ErrorOf(table, CompareAndSetRequest{"d", "", "1"}),
            "cannot add key 'd': the store holds 3 keys, its limit");
  EXPECT_EQ(AnswerOf(table, SetRequest{"c", "2"}),
            Message(OkResponse{}));  // replacing a key is not adding one
  // Deleting frees the key and its bytes.
  ASSERT_EQ(AnswerOf(table, DeleteRequest{"a"}), Message(OkResponse{}));
  EXPECT_EQ(AnswerOf(table, SetRequest{"d", std::string(100, 'v')}), Message(OkResponse{}));
}

TEST(KeyValueTable, TheVersionMovesOnEveryChangeAndOnlyThen) {
  KeyValueTable table;
  uint64_t version = table.version();
  auto changed = [&] {
    bool moved = table.version() != version;
    version = table.version();
    return moved;
  };
  AnswerOf(table, SetRequest{"k", "1"});
  EXPECT_TRUE(changed());
  AnswerOf(table, GetRequest{"k", 0});
  AnswerOf(table, WaitRequest{{"k"}, 0});
  AnswerOf(table, CompareAndSetRequest{"k", "other", "2"});
  AnswerOf(table, DeleteRequest{"absent"});
  EXPECT_FALSE(changed());
  AnswerOf(table, SetRequest{"text", "x"});
  EXPECT_TRUE(changed());
  AnswerOf(table, AddRequest{"text", 1});
  EXPECT_FALSE(changed());
  AnswerOf(table, AddRequest{"k", 1});
  EXPECT_TRUE(changed());
  AnswerOf(table, CompareAndSetRequest{"k", "2", "3"});
  EXPECT_TRUE(changed());
  AnswerOf(table, DeleteRequest{"k"});
  EXPECT_TRUE(changed());
}

TEST(KeyValueTable, KeysAndValuesInErrorsArePrintableAndShort) {
  KeyValueTable table;
  ASSERT_EQ(AnswerOf(table, SetRequest{"bad\nkey", std::string("\x01\x02", 2)}), Message(OkResponse{}));
  EXPECT_EQ(ErrorOf(table, AddRequest{"bad\nkey", 1}),
            "cannot add to key 'bad?key': its value '??"
            "' is not a whole number");
  EXPECT_EQ(ErrorOf(table, GetRequest{std::string(100, 'k'), 0}),
            "timed out after 0 ms waiting for key '" + std::string(80, 'k') + "...'");
}

TEST(KeyValueTable, ValuesWithPrefixAreThoseOfTheKeysUnderIt) {
  KeyValueTable table;
  for (const char* key : {"hvdrun/exit/1", "hvdrun/exit/10", "hvdrun/exit", "hvdrun/exiT/2", "other"}) {
    AnswerOf(table, SetRequest{key, key});
  }
  std::map<std::string, std::string> expected = {{"hvdrun/exit/1", "hvdrun/exit/1"},
                                                 {"hvdrun/exit/10", "hvdrun/exit/10"}};
  EXPECT_EQ(table.ValuesWithPrefix("hvdrun/exit/"), expected);
  EXPECT_EQ(table.ValuesWithPrefix("").size(), 5u);
  EXPECT_TRUE(table.ValuesWithPrefix("none/").empty());
}

TEST(KeyValueTable, OnlyStoreRequestsAreTheTables) {
  EXPECT_TRUE(IsStoreRequest(SetRequest{}));
  EXPECT_TRUE(IsStoreRequest(DeleteRequest{}));
  EXPECT_FALSE(IsStoreRequest(rendezvous::ReportRequest{}));
  EXPECT_FALSE(IsStoreRequest(OkResponse{}));
  KeyValueTable table;
  EXPECT_EQ(ErrorOf(table, rendezvous::ReportRequest{0, "{}"}), "not a store request: ReportRequest");
}

}  // namespace
}  // namespace hvdrun
