#include "common/placement/host_spec.h"

#include <gtest/gtest.h>

namespace hvdrun {
namespace {

struct ValidCase {
  const char* spec;
  std::vector<HostSlots> expected;
};

class ParseHostListValid : public testing::TestWithParam<ValidCase> {};

TEST_P(ParseHostListValid, Parses) {
  StatusOr<std::vector<HostSlots>> hosts = ParseHostList(GetParam().spec);
  ASSERT_TRUE(hosts.ok()) << hosts.status().message();
  EXPECT_EQ(hosts.value(), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Specs, ParseHostListValid,
    testing::Values(ValidCase{"localhost", {{"localhost", 1}}},
                    ValidCase{"server1:4,server2:4", {{"server1", 4}, {"server2", 4}}},
                    ValidCase{"10.0.0.1:2,10.0.0.2", {{"10.0.0.1", 2}, {"10.0.0.2", 1}}},
                    ValidCase{"[::1]:2", {{"::1", 2}}}, ValidCase{"[fe80::1%eth0]", {{"fe80::1%eth0", 1}}},
                    // A host named twice gets the sum of its slots and keeps its first position.
                    ValidCase{"a:2,b:1,a:3", {{"a", 5}, {"b", 1}}},
                    ValidCase{"node_1.lab-a.example:16", {{"node_1.lab-a.example", 16}}},
                    // user@host: the login for that host; the host keeps its plain name.
                    ValidCase{"alice@server1:2,server2:2", {{"server1", 2, "alice"}, {"server2", 2, ""}}},
                    ValidCase{"root@[::1]:2,bob@10.0.0.2", {{"::1", 2, "root"}, {"10.0.0.2", 1, "bob"}}},
                    // A later entry without a user keeps the first one's; one with none takes a later's.
                    ValidCase{"u@a:1,a:2,b,v@b", {{"a", 3, "u"}, {"b", 2, "v"}}}));

struct InvalidCase {
  const char* spec;
  const char* message_part;
};

class ParseHostListInvalid : public testing::TestWithParam<InvalidCase> {};

TEST_P(ParseHostListInvalid, NamesTokenAndProblem) {
  StatusOr<std::vector<HostSlots>> hosts = ParseHostList(GetParam().spec);
  ASSERT_FALSE(hosts.ok());
  EXPECT_NE(hosts.status().message().find(GetParam().message_part), std::string::npos)
      << hosts.status().message();
  EXPECT_EQ(hosts.status().message().rfind("-H: ", 0), 0u) << hosts.status().message();
  EXPECT_EQ(hosts.status().message().find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Specs, ParseHostListInvalid,
    testing::Values(InvalidCase{"", "empty host list"}, InvalidCase{"server1:x", "host 1 'server1:x': slots"},
                    InvalidCase{"a,server2:0", "host 2 'server2:0': slots"},
                    InvalidCase{"a:-1", "slots must be a whole number"}, InvalidCase{"a:2:3", "IPv6"},
                    InvalidCase{"a,,b", "host 2 '': empty entry"},
                    InvalidCase{"a,", "host 2 '': empty entry"}, InvalidCase{"fe80::1:2", "need brackets"},
                    InvalidCase{"[::1", "missing ']'"}, InvalidCase{"[::1]2", "expected ':slots'"},
                    InvalidCase{"[zz::1]:2", "not a valid IPv6"}, InvalidCase{":4", "empty host name"},
                    InvalidCase{"a b:2", "letters, digits"}, InvalidCase{"-np:2", "cannot start with '-'"},
                    InvalidCase{"a:99999999999", "slots must be a whole number"},
                    InvalidCase{"@server1:2", "host 1 '@server1:2': empty user name"},
                    InvalidCase{"a b@server1", "user names may hold only"},
                    InvalidCase{"-l@server1", "a user name cannot start with '-'"},
                    InvalidCase{"alice@", "empty host name"},
                    InvalidCase{"x@y@server1", "host names may hold only"},
                    InvalidCase{"u@a,v@a:2", "host 2 'v@a:2': host 'a' is already named with user 'u'"}));

TEST(HostSpec, TotalSlotsSumsEveryHost) {
  EXPECT_EQ(TotalSlots({{"a", 2}, {"b", 3}}), 5);
  EXPECT_EQ(TotalSlots({}), 0);
}

TEST(HostSpec, FormatIsTheInverseOfParse) {
  EXPECT_EQ(FormatHostSlots({"server1", 4}), "server1:4");
  EXPECT_EQ(FormatHostSlots({"::1", 2}), "[::1]:2");
  EXPECT_EQ(FormatHostSlots({"server1", 2, "alice"}), "alice@server1:2");
  EXPECT_EQ(FormatHostSlots({"::1", 1, "bob"}), "bob@[::1]:1");
  StatusOr<std::vector<HostSlots>> hosts = ParseHostList(FormatHostSlots({"fe80::2", 3}));
  ASSERT_TRUE(hosts.ok());
  EXPECT_EQ(hosts.value(), (std::vector<HostSlots>{{"fe80::2", 3}}));
}

}  // namespace
}  // namespace hvdrun
