#include "hvdrun/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace hvdrun {
namespace {

StatusOr<std::unique_ptr<int>> MakePointer(bool ok) {
  if (!ok) return Status::Error("rank 3 never arrived");
  return std::make_unique<int>(42);
}

StatusOr<int> Failed() { return Status::Error("rank 3 never arrived"); }

TEST(StatusTest, OkAndErrorCarryTheirLine) {
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().message(), "");
  Status error = Status::Error("--np: 'x' is not a whole number");
  EXPECT_FALSE(error.ok());
  EXPECT_EQ(error.message(), "--np: 'x' is not a whole number");
}

TEST(StatusOrTest, ValueIsReachedEveryWayItsUsersKnow) {
  StatusOr<std::string> text = std::string("fusion");
  ASSERT_TRUE(text.ok());
  EXPECT_TRUE(text.status().ok());
  EXPECT_EQ(*text, "fusion");
  EXPECT_EQ(text.value(), "fusion");
  EXPECT_EQ(text->size(), 6U);
  (*text).append("!");
  text.value().append("!");
  EXPECT_EQ(*text, "fusion!!");

  const StatusOr<std::string>& constant = text;
  EXPECT_EQ(*constant, "fusion!!");
  EXPECT_EQ(constant->size(), 8U);
  EXPECT_EQ(constant.value(), "fusion!!");
}

TEST(StatusOrTest, DereferencingAnRvalueMovesTheValueOut) {
  // The example of runtime.h's header comment: (*runtime)->Call(...) on a StatusOr<unique_ptr<T>>.
  StatusOr<std::unique_ptr<int>> pointer = MakePointer(true);
  EXPECT_EQ(**pointer, 42);
  std::unique_ptr<int> moved = *std::move(pointer);
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(*moved, 42);
  std::unique_ptr<int> by_value = MakePointer(true).value();
  EXPECT_EQ(*by_value, 42);

  static_assert(std::is_same_v<decltype(*std::declval<StatusOr<int>>()), int&&>);
  static_assert(std::is_same_v<decltype(*std::declval<StatusOr<int>&>()), int&>);
  static_assert(std::is_same_v<decltype(*std::declval<const StatusOr<int>&>()), const int&>);
  static_assert(std::is_same_v<decltype(*std::declval<const StatusOr<int>>()), const int&&>);
  static_assert(std::is_same_v<decltype(std::declval<StatusOr<int>>().value()), int&&>);
  static_assert(std::is_same_v<decltype(std::declval<const StatusOr<int>>().value()), const int&&>);
}

TEST(StatusOrTest, ValueOrGivesTheFallbackOnlyForAnError) {
  StatusOr<int> value = 7;
  StatusOr<int> error = Status::Error("no such tensor");
  EXPECT_EQ(value.value_or(-1), 7);
  EXPECT_EQ(error.value_or(-1), -1);
  EXPECT_EQ(StatusOr<std::string>(Status::Error("x")).value_or("fallback"), "fallback");
  StatusOr<std::unique_ptr<int>> pointer = MakePointer(true);
  // The analyzer loses the pointer's owner across std::optional's move: a false leak report.
  // NOLINTNEXTLINE(clang-analyzer-cplusplus.NewDeleteLeaks)
  std::unique_ptr<int> moved = std::move(pointer).value_or(nullptr);
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(*moved, 42);
  EXPECT_EQ(MakePointer(false).value_or(nullptr), nullptr);
  EXPECT_EQ(error.status().message(), "no such tensor");
}

// Reading the value of an error stops the program with the error's message, in every build type
// (these tests run in the Release build too: no assert is involved).
using StatusOrDeathTest = ::testing::Test;

TEST_F(StatusOrDeathTest, ReadingTheValueOfAnErrorAbortsWithItsMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  StatusOr<int> error = Failed();
  const StatusOr<int>& constant = error;
  const char* const kMessage = "hvdrun: StatusOr::.* read the value of an error: rank 3 never arrived";
  EXPECT_DEATH((void)error.value(), kMessage);
  EXPECT_DEATH((void)constant.value(), kMessage);
  EXPECT_DEATH((void)Failed().value(), kMessage);
  EXPECT_DEATH((void)*error, kMessage);
  EXPECT_DEATH((void)*constant, kMessage);
  EXPECT_DEATH((void)*Failed(), kMessage);
  EXPECT_DEATH((void)MakePointer(false)->get(), kMessage);
  EXPECT_DEATH((void)*(*MakePointer(false)), "operator\\* read the value of an error: rank 3 never arrived");
}

TEST_F(StatusOrDeathTest, ConstructingFromAnOkStatusAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH((void)StatusOr<int>{Status::Ok()}, "StatusOr constructed from an OK Status");
}

}  // namespace
}  // namespace hvdrun
