#include "common/placement/slurm_allocation.h"

#include <algorithm>
#include <cstdint>

#include "common/env_names.h"
#include "common/whole_number.h"

namespace hvdrun {
namespace {

// No allocation comes near this; a bound keeps a typo such as [1-1000000000] from exhausting memory.
constexpr int64_t kMaxNames = 1 << 20;

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

// The names one bracket's text stands for: `01-04,07` is 01 02 03 04 07.
StatusOr<std::vector<std::string>> ExpandBracket(std::string_view inside) {
  std::vector<std::string> names;
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
    if (high.value - low.value >= kMaxNames) {
      return Status::Error("'[" + std::string(inside) + "]': the range '" + std::string(range) +
                           "' is larger than any allocation");
    }
    for (int64_t n = low.value; n <= high.value; ++n) {
      std::string digits = std::to_string(n);
      if (digits.size() < low_text.size()) digits.insert(0, low_text.size() - digits.size(), '0');
      names.push_back(std::move(digits));
    }
    start = comma + 1;
  }
  return names;
}

// The names one entry stands for: each bracket group multiplies, the first varying slowest.
StatusOr<std::vector<std::string>> ExpandEntry(std::string_view entry) {
  std::vector<std::string> names = {""};
  size_t position = 0;
  while (position < entry.size()) {
    size_t open = entry.find('[', position);
    std::string_view literal = entry.substr(position, open - position);
    for (std::string& name : names) name.append(literal);
    if (open == std::string_view::npos) break;
    size_t close = entry.find(']', open);
    StatusOr<std::vector<std::string>> numbers = ExpandBracket(entry.substr(open + 1, close - open - 1));
    if (!numbers.ok()) return numbers.status();
    if (static_cast<int64_t>(names.size() * numbers.value().size()) > kMaxNames) {
      return Status::Error(std::string("'").append(entry).append("' names more hosts than any allocation"));
    }
    std::vector<std::string> product;
    product.reserve(names.size() * numbers.value().size());
    for (const std::string& name : names) {
      for (const std::string& number : numbers.value()) product.push_back(name + number);
    }
    names = std::move(product);
    position = close + 1;
  }
  return names;
}

}  // namespace

StatusOr<std::vector<std::string>> ExpandSlurmHostList(std::string_view text) {
  StatusOr<std::vector<std::string_view>> entries = SplitEntries(text);
  if (!entries.ok()) return entries.status();
  std::vector<std::string> hosts;
  for (std::string_view entry : entries.value()) {
    if (entry.empty()) return Status::Error("an empty entry");
    StatusOr<std::vector<std::string>> names = ExpandEntry(entry);
    if (!names.ok()) return names.status();
    for (std::string& name : names.value()) {
      std::string problem = CheckHostName(name);
      if (!problem.empty()) return Status::Error("'" + name + "': " + problem);
      hosts.push_back(std::move(name));
    }
  }
  return hosts;
}

StatusOr<std::vector<int>> ExpandSlurmTasksPerNode(std::string_view text) {
  std::vector<int> tasks;
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
    ParsedWholeNumber count = ParseWholeNumber(count_text, 1, 1 << 20);
    if (!count.ok()) {
      return Status::Error(std::string("'").append(item).append("' is not N or N(xK) with N a task count"));
    }
    if (static_cast<int64_t>(tasks.size()) + repeat > kMaxNames) {
      return Status::Error("more nodes than any allocation");
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
  for (size_t i = 0; i < names.value().size(); ++i) {
    const std::string& name = names.value()[i];
    if (std::find(names.value().begin(), names.value().begin() + static_cast<std::ptrdiff_t>(i), name) !=
        names.value().begin() + static_cast<std::ptrdiff_t>(i)) {
      return Status::Error(inside + list_name + "='" + allocation.node_list + "': names node " + name +
                           " twice");
    }
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
    ParsedWholeNumber parsed = ParseWholeNumber(ntasks, 1, 1 << 20);
    if (!parsed.ok()) {
      return Status::Error(inside + ntasks_name + "='" + ntasks + "' is not a task count from 1 to " +
                           std::to_string(1 << 20));
    }
    allocation.num_tasks = static_cast<int>(parsed.value);
  }
  return std::optional<SlurmAllocation>(std::move(allocation));
}

}  // namespace hvdrun
