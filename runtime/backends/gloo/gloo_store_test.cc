#include "runtime/backends/gloo/gloo_store.h"

#include <gloo/common/error.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "runtime/in_memory_store.h"

namespace hvdrun {
namespace {

using std::chrono::milliseconds;

TEST(GlooStoreTest, KeysLiveUnderThePrefix) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  GlooStore gloo_store(store.get(), "gloo/1/", milliseconds(1000));
  gloo_store.set("0", std::vector<char>{'a', '\0', 'b'});
  EXPECT_EQ(store->Get("gloo/1/0", milliseconds(0)).value(), std::string("a\0b", 3));
  EXPECT_EQ(gloo_store.get("0"), (std::vector<char>{'a', '\0', 'b'}));
  EXPECT_NO_THROW(gloo_store.wait({"0"}));
  // Another prefix does not see it.
  GlooStore other(store.get(), "gloo/2/", milliseconds(10));
  EXPECT_THROW(other.get("0"), gloo::IoException);
}

TEST(GlooStoreTest, GetHonoursTheTimeoutAndNamesTheKey) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  GlooStore gloo_store(store.get(), "p/", milliseconds(30));
  try {
    gloo_store.get("7");
    FAIL() << "get of a missing key returned";
  } catch (const gloo::IoException& e) {
    EXPECT_EQ(std::string(e.what()), "store: timed out after 30 ms waiting for key 'p/7'");
  }
}

TEST(GlooStoreTest, WaitUsesTheShorterTimeout) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  GlooStore gloo_store(store.get(), "p/", milliseconds(40));
  const auto start = std::chrono::steady_clock::now();
  // gloo's "no timeout" (zero) and a longer one are both bounded by the store's 40 ms.
  EXPECT_THROW(gloo_store.wait({"a"}, milliseconds(0)), gloo::IoException);
  EXPECT_THROW(gloo_store.wait({"a"}, milliseconds(60'000)), gloo::IoException);
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000));
  try {
    gloo_store.wait({"a", "b"}, milliseconds(10));
    FAIL() << "wait for missing keys returned";
  } catch (const gloo::IoException& e) {
    EXPECT_EQ(std::string(e.what()),
              "store: timed out after 10 ms waiting for 2 keys; 2 still missing: 'p/a', 'p/b'");
  }
}

}  // namespace
}  // namespace hvdrun
