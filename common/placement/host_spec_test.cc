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
                    ValidCase{"node1.lab-a.example:16", {{"node1.lab-a.example", 16}}},
                    ValidCase{"a:1048575,b:1", {{"a", 1048575}, {"b", 1}}},
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
                    InvalidCase{"u@a,v@a:2", "host 2 'v@a:2': host 'a' is already named with user 'u'"},
                    // Names libssh and DNS refuse are refused here, with the rule they break.
                    InvalidCase{".", "host 1 '.': a '.' at the start or end, or two in a row"},
                    InvalidCase{"...", "a '.' at the start or end, or two in a row"},
                    InvalidCase{"a..b", "a '.' at the start or end, or two in a row"},
                    InvalidCase{"_", "host 1 '_': host names may hold only letters, digits, '-' and '.'"},
                    InvalidCase{"node_1", "host names may hold only letters, digits, '-' and '.'"},
                    InvalidCase{"bad-", "host 1 'bad-': a part between dots cannot start or end with '-'"},
                    InvalidCase{"a.-b", "a part between dots cannot start or end with '-'"},
                    InvalidCase{"[:]", "host 1 '[:]': not a valid IPv6 address"},
                    InvalidCase{"[:]:1", "host 1 '[:]:1': not a valid IPv6 address"},
                    InvalidCase{"[::1%]", "not a valid IPv6 address"},
                    InvalidCase{"[1:2:3:4:5:6:7:8:9]", "not a valid IPv6 address"},
                    // One slot limit and one wording for every slot count, and for their sum.
                    InvalidCase{"localhost:2000000",
                                "host 1 'localhost:2000000': slots must be a whole number from 1 to 1048576, "
                                "got '2000000'"},
                    InvalidCase{
                        "a:1048576,a:1",
                        "host 2 'a:1': the slots add up to 1048577, more than 1048576 (the most ranks "
                        "one job runs)"},
                    InvalidCase{"a:1048576,b", "the slots add up to 1048577, more than 1048576"}));

TEST(HostSpec, HostNamesFollowRfc1123) {
  EXPECT_EQ(CheckHostName(std::string(63, 'a') + ".b"), "");
  EXPECT_EQ(CheckHostName(std::string(64, 'a')), "a part between dots has at most 63 characters");
  std::string long_name;
  for (int i = 0; i < 64; ++i) long_name += "abc.";
  long_name += "d";
  EXPECT_EQ(CheckHostName(long_name), "a host name has at most 253 characters");
  EXPECT_EQ(CheckHostName("10.0.0.1"), "");
  EXPECT_EQ(CheckHostName("fe80::1%eth0"), "");
}

TEST(HostSpec, ALongListIsBuiltInLinearTime) {
  // 200,000 distinct hosts: a quadratic merge takes minutes here, a linear one milliseconds.
  std::string spec;
  for (int i = 0; i < 200000; ++i) spec += (i == 0 ? "n" : ",n") + std::to_string(i);
  StatusOr<std::vector<HostSlots>> hosts = ParseHostList(spec);
  ASSERT_TRUE(hosts.ok()) << hosts.status().message();
  EXPECT_EQ(hosts.value().size(), 200000u);
  EXPECT_EQ(TotalSlots(hosts.value()), 200000);
}

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
