#include "common/placement/slurm_allocation.h"

#include <gtest/gtest.h>

#include <map>

namespace hvdrun {
namespace {

using Names = std::vector<std::string>;

// Each expansion as `scontrol show hostnames` (Slurm 22.05) prints it.
TEST(SlurmHostList, ExpandsAsScontrolDoes) {
  const std::vector<std::pair<std::string, Names>> table = {
      {"n1", {"n1"}},
      {"a,b", {"a", "b"}},
      {"x[9-11]", {"x9", "x10", "x11"}},
      {"n[08-10]", {"n08", "n09", "n10"}},
      {"n[001-3]", {"n001", "n002", "n003"}},
      {"n[1-003]", {"n1", "n2", "n3"}},
      {"n[98-101]", {"n98", "n99", "n100", "n101"}},
      {"n[5]", {"n5"}},
      {"node[01-04,07],gpu-a[1-2],login1",
       {"node01", "node02", "node03", "node04", "node07", "gpu-a1", "gpu-a2", "login1"}},
      {"r[1-2]-n[01-02]", {"r1-n01", "r1-n02", "r2-n01", "r2-n02"}},
      {"a[1-2],a3", {"a1", "a2", "a3"}},
  };
  for (const auto& [text, expected] : table) {
    StatusOr<Names> names = ExpandSlurmHostList(text);
    ASSERT_TRUE(names.ok()) << text << ": " << names.status().message();
    EXPECT_EQ(names.value(), expected) << text;
  }
}

TEST(SlurmHostList, ALiteralAfterTheLastBracketIsKept) {
  StatusOr<Names> names = ExpandSlurmHostList("a[1-2]b[3-4]c");
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_EQ(names.value(), (Names{"a1b3c", "a1b4c", "a2b3c", "a2b4c"}));
}

TEST(SlurmHostList, ErrorsNameTheTextAtFault) {
  const std::map<std::string, std::string> table = {
      {"n[3-1]", "'[3-1]': the range '3-1' runs backwards"},
      {"n[1-2", "a '[' without ']'"},
      {"n[1-2]]", "a ']' without '[' at character 7"},
      {"n[[1]]", "a '[' inside brackets at character 3"},
      {"n[]", "'[]': '' is not a number or a range N-M"},
      {"n[a]", "'[a]': 'a' is not a number or a range N-M"},
      {"n[1,,2]", "'[1,,2]': '' is not a number or a range N-M"},
      {"n[1--2]", "'[1--2]': '1--2' is not a number or a range N-M"},
      {"a,,b", "an empty entry"},
      {"", "an empty entry"},
      {"n[0-99999999]", "'[0-99999999]' names more than 1048576 nodes (the most ranks one job runs)"},
      // Ranges that each fit, and entries that each fit, are bounded together.
      {"n[1-600000,1-600000]",
       "'[1-600000,1-600000]' names more than 1048576 nodes (the most ranks one job runs)"},
      {"a[1-1024][1-1025]",
       "'a[1-1024][1-1025]' names more than 1048576 nodes (the most ranks one job runs)"},
      {"a[1-600000],b[1-600000]", "the list names more than 1048576 nodes (the most ranks one job runs)"},
      {"n[1-2],n2", "names node n2 twice"},
      {"n_1", "'n_1': host names may hold only letters, digits, '-' and '.'"},
  };
  for (const auto& [text, expected] : table) {
    StatusOr<Names> names = ExpandSlurmHostList(text);
    ASSERT_FALSE(names.ok()) << text;
    EXPECT_EQ(names.status().message(), expected) << text;
  }
}

TEST(SlurmTasksPerNode, ExpandsRepeats) {
  const std::vector<std::pair<std::string, std::vector<int>>> table = {
      {"1", {1}}, {"2,1", {2, 1}}, {"2(x3),1", {2, 2, 2, 1}}, {"4(x2)", {4, 4}}, {"1,3(x2),2", {1, 3, 3, 2}},
  };
  for (const auto& [text, expected] : table) {
    StatusOr<std::vector<int>> tasks = ExpandSlurmTasksPerNode(text);
    ASSERT_TRUE(tasks.ok()) << text << ": " << tasks.status().message();
    EXPECT_EQ(tasks.value(), expected) << text;
  }
}

TEST(SlurmTasksPerNode, ErrorsNameTheItem) {
  for (const char* text : {"", "2(x)", "2(3)", "2(x3", "x3", "0", "2,,1", "2(x0)", "-1"}) {
    EXPECT_FALSE(ExpandSlurmTasksPerNode(text).ok()) << text;
  }
  EXPECT_EQ(ExpandSlurmTasksPerNode("2,4(y2)").status().message(),
            "'4(y2)' is not N or N(xK) with K from 1 to 1048576");
  // The sum is checked, not left to overflow an int.
  EXPECT_EQ(ExpandSlurmTasksPerNode("1048576(x2048)").status().message(),
            "adds up to more than 1048576 tasks (the most ranks one job runs)");
  EXPECT_EQ(ExpandSlurmTasksPerNode("1048576,1").status().message(),
            "adds up to more than 1048576 tasks (the most ranks one job runs)");
  EXPECT_EQ(ExpandSlurmTasksPerNode("2097152").status().message(),
            "'2097152' is not N or N(xK) with N a task count from 1 to 1048576");
  EXPECT_EQ(ExpandSlurmTasksPerNode("1(x1048577)").status().message(),
            "'1(x1048577)' is not N or N(xK) with K from 1 to 1048576");
}

TEST(SlurmHostList, TheLargestAllocationExpandsInLinearTime) {
  // 2^20 nodes, every name checked for a duplicate: a quadratic check takes hours, a linear one
  // well under a second.
  StatusOr<Names> names = ExpandSlurmHostList("n[1-1048576]");
  ASSERT_TRUE(names.ok()) << names.status().message();
  ASSERT_EQ(names.value().size(), 1048576u);
  EXPECT_EQ(names.value().back(), "n1048576");
}

std::function<const char*(const char*)> Env(std::map<std::string, std::string> values) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(values));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

TEST(SlurmAllocation, OutsideAnAllocationThereIsNone) {
  StatusOr<std::optional<SlurmAllocation>> allocation = ReadSlurmAllocation(Env({}));
  ASSERT_TRUE(allocation.ok());
  EXPECT_FALSE(allocation.value().has_value());
}

TEST(SlurmAllocation, NodesSlotsAndTasks) {
  StatusOr<std::optional<SlurmAllocation>> allocation =
      ReadSlurmAllocation(Env({{"SLURM_JOB_ID", "42"},
                               {"SLURM_JOB_NODELIST", "n[1-3]"},
                               {"SLURM_TASKS_PER_NODE", "2(x2),1"},
                               {"SLURM_NTASKS", "5"}}));
  ASSERT_TRUE(allocation.ok()) << allocation.status().message();
  ASSERT_TRUE(allocation.value().has_value());
  const SlurmAllocation& a = *allocation.value();
  EXPECT_EQ(a.job_id, "42");
  EXPECT_EQ(a.nodes, (std::vector<HostSlots>{{"n1", 2}, {"n2", 2}, {"n3", 1}}));
  EXPECT_EQ(a.num_tasks, 5);
}

TEST(SlurmAllocation, OlderNamesAndNoTaskCount) {
  StatusOr<std::optional<SlurmAllocation>> allocation = ReadSlurmAllocation(
      Env({{"SLURM_JOB_ID", "7"}, {"SLURM_NODELIST", "a,b"}, {"SLURM_TASKS_PER_NODE", "2(x2)"}}));
  ASSERT_TRUE(allocation.ok()) << allocation.status().message();
  EXPECT_EQ(allocation.value()->nodes, (std::vector<HostSlots>{{"a", 2}, {"b", 2}}));
  EXPECT_EQ(allocation.value()->num_tasks, 4);
  allocation = ReadSlurmAllocation(Env({{"SLURM_JOB_ID", "7"},
                                        {"SLURM_NODELIST", "a"},
                                        {"SLURM_TASKS_PER_NODE", "2"},
                                        {"SLURM_NPROCS", "1"}}));
  ASSERT_TRUE(allocation.ok()) << allocation.status().message();
  EXPECT_EQ(allocation.value()->num_tasks, 1);
}

TEST(SlurmAllocation, ErrorsNameTheVariableAndItsText) {
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> table = {
      {{{"SLURM_JOB_ID", "9"}}, "inside Slurm job 9: SLURM_JOB_NODELIST is not set"},
      {{{"SLURM_JOB_ID", "9"}, {"SLURM_JOB_NODELIST", "n[2-1]"}},
       "inside Slurm job 9: SLURM_JOB_NODELIST='n[2-1]': '[2-1]': the range '2-1' runs backwards"},
      {{{"SLURM_JOB_ID", "9"}, {"SLURM_JOB_NODELIST", "n[1-2],n2"}},
       "inside Slurm job 9: SLURM_JOB_NODELIST='n[1-2],n2': names node n2 twice"},
      {{{"SLURM_JOB_ID", "9"}, {"SLURM_JOB_NODELIST", "n[1-2]"}},
       "inside Slurm job 9: SLURM_TASKS_PER_NODE is not set"},
      {{{"SLURM_JOB_ID", "9"}, {"SLURM_JOB_NODELIST", "n[1-2]"}, {"SLURM_TASKS_PER_NODE", "2(x3)"}},
       "inside Slurm job 9: SLURM_TASKS_PER_NODE='2(x3)' gives 3 nodes, but SLURM_JOB_NODELIST='n[1-2]' has "
       "2"},
      {{{"SLURM_JOB_ID", "9"}, {"SLURM_JOB_NODELIST", "n1"}, {"SLURM_TASKS_PER_NODE", "two"}},
       "inside Slurm job 9: SLURM_TASKS_PER_NODE='two': 'two' is not N or N(xK) with N a task count from 1 "
       "to "
       "1048576"},
      {{{"SLURM_JOB_ID", "9"},
        {"SLURM_JOB_NODELIST", "n[1-2048]"},
        {"SLURM_TASKS_PER_NODE", "1048576(x2048)"}},
       "inside Slurm job 9: SLURM_TASKS_PER_NODE='1048576(x2048)': adds up to more than 1048576 tasks (the "
       "most "
       "ranks one job runs)"},
      {{{"SLURM_JOB_ID", "9"},
        {"SLURM_JOB_NODELIST", "n1"},
        {"SLURM_TASKS_PER_NODE", "1"},
        {"SLURM_NTASKS", "x"}},
       "inside Slurm job 9: SLURM_NTASKS='x' is not a task count from 1 to 1048576"},
  };
  for (const auto& [values, expected] : table) {
    StatusOr<std::optional<SlurmAllocation>> allocation = ReadSlurmAllocation(Env(values));
    ASSERT_FALSE(allocation.ok()) << expected;
    EXPECT_EQ(allocation.status().message(), expected);
  }
}

}  // namespace
}  // namespace hvdrun
