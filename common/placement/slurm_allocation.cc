#include "common/placement/slurm_allocation.h"

#include <algorithm>
#include <cstdint>
#include <unordered_set>

#include "common/env_names.h"
#include "common/whole_number.h"

namespace hvdrun {
namespace {

// Every node holds at least one task and a job runs at most kMaxSlots, so no allocation hvdrun
// can use names more nodes; the bound keeps a typo such as [1-1000000000] from exhausting memory.
constexpr int64_t kMaxNames = kMaxSlots;

// The end of an error about a list of nodes too long: " more than 1048576 nodes (...)".
std::string MoreNodesThanAllowed() {
  return " more than " + std::to_string(kMaxNames) + " nodes (the most ranks one job runs)";
}

// The top-level entries of a host list: commas inside brackets do not split.
StatusOr<std::vector<std::string_view>> SplitEntries(std::string_view text) {
  std::vector<std::string_view> entries;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      entries.push_back(text.substr(start, i - start));
      start = i + 1;
    } else if (text[i] == '[') {
      if (++depth > 1) return Status::Error("a '[' inside brackets at character " + std::to_string(i + 1));
    } else if (text[i] == ']') {
      if (--depth < 0) return Status::Error("a ']' without '[' at character " + std::to_string(i + 1));
    }
  }
  if (depth != 0) return Status::Error("a '[' without ']'");
  return entries;
}

// Numbers low..high, each written with at least `width` digits (zeros in front).
struct NumberRange {
  int64_t low = 0;
  int64_t high = 0;
  size_t width = 0;
};

// One entry of a host list as literal text around bracket groups: literals[0] groups[0]
// literals[1] ... groups[n-1] literals[n], and how many names it stands for.
struct EntryPattern {
  std::vector<std::string_view> literals;
  std::vector<std::vector<NumberRange>> groups;
  int64_t count = 1;
};

// The ranges of one bracket's text: `01-04,07` is 01-04 (width 2) and 07. Fails when they stand
// for more than kMaxNames numbers together.
StatusOr<std::vector<NumberRange>> ParseBracket(std::string_view inside, int64_t* count) {
  std::vector<NumberRange> ranges;
  *count = 0;
  size_t start = 0;
  while (start <= inside.size()) {
    size_t comma = inside.find(',', start);
    if (comma == std::string_view::npos) comma = inside.size();
    std::string_view range = inside.substr(start, comma - start);
    size_t dash = range.find('-');
    std::string_view low_text = range.substr(0, dash);
    std::string_view high_text = dash == std::string_view::npos ? low_text : range.substr(dash + 1);
    ParsedWholeNumber low = ParseWholeNumber(low_text, 0, INT64_MAX / 2);
    ParsedWholeNumber high = ParseWholeNumber(high_text, 0, INT64_MAX / 2);
    if (range.empty() || !low.ok() || !high.ok() || low_text.front() == '-' || high_text.front() == '-') {
      return Status::Error("'[" + std::string(inside) + "]': '" + std::string(range) +
                           "' is not a number or a range N-M");
    }
    if (low.value > high.value) {
      return Status::Error("'[" + std::string(inside) + "]': the range '" + std::string(range) +
                           "' runs backwards");
    }
    if (high.value - low.value >= kMaxNames - *count) {
      return Status::Error("'[" + std::string(inside) + "]' names" + MoreNodesThanAllowed());
    }
    *count += high.value - low.value + 1;
    ranges.push_back({low.value, high.value, low_text.size()});
    start = comma + 1;
  }
  return ranges;
}

// An entry's literals and groups (its brackets balanced, none nested: SplitEntries checked).
// Fails when it stands for more than kMaxNames names.
StatusOr<EntryPattern> ParseEntry(std::string_view entry) {
  EntryPattern pattern;
  size_t position = 0;
  while (true) {
    const size_t open = entry.find('[', position);
    pattern.literals.push_back(entry.substr(position, open - position));
    if (open == std::string_view::npos) return pattern;
    const size_t close = entry.find(']', open);
    int64_t count = 0;
    StatusOr<std::vector<NumberRange>> ranges =
        ParseBracket(entry.substr(open + 1, close - open - 1), &count);
    if (!ranges.ok()) return ranges.status();
    if (count > kMaxNames / pattern.count) {
      // Appended, not "'" + ...: GCC 12's -Wrestrict misreads that chain at -O3.
      std::string problem(entry);
      problem.insert(0, 1, '\'');
      return Status::Error(problem.append("' names").append(MoreNodesThanAllowed()));
    }
    pattern.count *= count;
    pattern.groups.push_back(std::move(ranges).value());
    position = close + 1;
  }
}

// Appends the names of `pattern` from group `group` on, each `name` followed by what the groups
// from `group` on add, the first group varying slowest. `name` is left as it was given.
void AppendNames(const EntryPattern& pattern, size_t group, std::string& name,
                 std::vector<std::string>& out) {
  const size_t given = name.size();
  name.append(pattern.literals[group]);
  if (group == pattern.groups.size()) {
    out.push_back(name);
  } else {
    const size_t prefix = name.size();
    for (const NumberRange& range : pattern.groups[group]) {
      for (int64_t n = range.low; n <= range.high; ++n) {
        const std::string digits = std::to_string(n);
        if (digits.size() < range.width) name.append(range.width - digits.size(), '0');
        name.append(digits);
        AppendNames(pattern, group + 1, name, out);
        name.resize(prefix);
      }
    }
  }
  name.resize(given);
}

}  // namespace

StatusOr<std::vector<std::string>> ExpandSlurmHostList(std::string_view text) {
  StatusOr<std::vector<std::string_view>> entries = SplitEntries(text);
  if (!entries.ok()) return entries.status();
  // Every entry is parsed and counted before any name is written, so that a list too long fails
  // before it takes memory.
  std::vector<EntryPattern> patterns;
  int64_t total = 0;
  for (std::string_view entry : entries.value()) {
    if (entry.empty()) return Status::Error("an empty entry");
    StatusOr<EntryPattern> pattern = ParseEntry(entry);
    if (!pattern.ok()) return pattern.status();
    total += pattern.value().count;
    if (total > kMaxNames) return Status::Error("the list names" + MoreNodesThanAllowed());
    patterns.push_back(std::move(pattern).value());
  }
  std::vector<std::string> hosts;
  hosts.reserve(static_cast<size_t>(total));
  std::string name;
  for (const EntryPattern& pattern : patterns) AppendNames(pattern, 0, name, hosts);
  // Views into `hosts`, which no longer grows.
  std::unordered_set<std::string_view> seen;
  seen.reserve(hosts.size());
  for (const std::string& host : hosts) {
    if (std::string problem = CheckHostName(host); !problem.empty()) {
      return Status::Error("'" + host + "': " + problem);
    }
    if (!seen.insert(host).second) return Status::Error("names node " + host + " twice");
  }
  return hosts;
}

StatusOr<std::vector<int>> ExpandSlurmTasksPerNode(std::string_view text) {
  std::vector<int> tasks;
  int64_t total = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(start, comma - start);
    std::string_view count_text = item;
    int64_t repeat = 1;
    size_t paren = item.find('(');
    if (paren != std::string_view::npos) {
      count_text = item.substr(0, paren);
      std::string_view times = item.substr(paren);
      ParsedWholeNumber parsed = times.size() > 3 && times.substr(0, 2) == "(x" && times.back() == ')'
                                     ? ParseWholeNumber(times.substr(2, times.size() - 3), 1, kMaxNames)
                                     : ParsedWholeNumber{0, WholeNumberProblem::kNotWholeNumber};
      if (!parsed.ok()) {
        return Status::Error(std::string("'").append(item).append("' is not N or N(xK) with K from 1 to ") +
                             std::to_string(kMaxNames));
      }
      repeat = parsed.value;
    }
    ParsedWholeNumber count = ParseWholeNumber(count_text, 1, kMaxSlots);
    if (!count.ok()) {
      return Status::Error("'" + std::string(item) + "' is not N or N(xK) with N a task count from 1 to " +
                           std::to_string(kMaxSlots));
    }
    if (static_cast<int64_t>(tasks.size()) + repeat > kMaxNames) {
      return Status::Error("gives" + MoreNodesThanAllowed());
    }
    total += count.value * repeat;
    if (total > kMaxSlots) {
      return Status::Error("adds up to more than " + std::to_string(kMaxSlots) +
                           " tasks (the most ranks one job runs)");
    }
    tasks.insert(tasks.end(), static_cast<size_t>(repeat), static_cast<int>(count.value));
    start = comma + 1;
  }
  return tasks;
}

StatusOr<std::optional<SlurmAllocation>> ReadSlurmAllocation(
    const std::function<const char*(const char*)>& getenv) {
  const char* job_id = getenv(env::kSlurmJobId);
  if (job_id == nullptr || *job_id == '\0') return std::optional<SlurmAllocation>();
  auto either = [&](const char* name, const char* older) -> std::pair<const char*, const char*> {
    const char* value = getenv(name);
    if (value != nullptr && *value != '\0') return {name, value};
    value = getenv(older);
    if (value != nullptr && *value != '\0') return {older, value};
    return {name, nullptr};
  };
  const std::string inside = "inside Slurm job " + std::string(job_id) + ": ";
  SlurmAllocation allocation;
  allocation.job_id = job_id;

  auto [list_name, list] = either(env::kSlurmJobNodeList, env::kSlurmNodeList);
  if (list == nullptr) return Status::Error(inside + list_name + " is not set");
  allocation.node_list = list;
  StatusOr<std::vector<std::string>> names = ExpandSlurmHostList(list);
  if (!names.ok()) {
    return Status::Error(inside + list_name + "='" + allocation.node_list + "': " + names.status().message());
  }

  const char* per_node = getenv(env::kSlurmTasksPerNode);
  if (per_node == nullptr || *per_node == '\0') {
    return Status::Error(inside + env::kSlurmTasksPerNode + " is not set");
  }
  allocation.tasks_per_node = per_node;
  StatusOr<std::vector<int>> tasks = ExpandSlurmTasksPerNode(per_node);
  if (!tasks.ok()) {
    return Status::Error(inside + env::kSlurmTasksPerNode + "='" + allocation.tasks_per_node +
                         "': " + tasks.status().message());
  }
  if (tasks.value().size() != names.value().size()) {
    return Status::Error(inside + env::kSlurmTasksPerNode + "='" + allocation.tasks_per_node + "' gives " +
                         std::to_string(tasks.value().size()) + " nodes, but " + list_name + "='" +
                         allocation.node_list + "' has " + std::to_string(names.value().size()));
  }
  int total = 0;
  for (size_t i = 0; i < names.value().size(); ++i) {
    allocation.nodes.push_back(HostSlots{names.value()[i], tasks.value()[i]});
    total += tasks.value()[i];
  }

  auto [ntasks_name, ntasks] = either(env::kSlurmNtasks, env::kSlurmNprocs);
  allocation.num_tasks = total;
  if (ntasks != nullptr) {
    ParsedWholeNumber parsed = ParseWholeNumber(ntasks, 1, kMaxSlots);
    if (!parsed.ok()) {
      return Status::Error(inside + ntasks_name + "='" + ntasks + "' is not a task count from 1 to " +
                           std::to_string(kMaxSlots));
    }
    allocation.num_tasks = static_cast<int>(parsed.value);
  }
  return std::optional<SlurmAllocation>(std::move(allocation));
}

}  // namespace hvdrun
