#include "lab/run/slurm_job.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>

#include "tests/e2e/process_runner.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::lab {
namespace {

ExperimentConfig Parse(const std::string& text) {
  StatusOr<ExperimentConfig> config = ParseExperiment(text, "/labs/exp.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return config.ok() ? config.value() : ExperimentConfig{};
}

std::function<const char*(const char*)> Environment(const std::map<std::string, std::string>& variables) {
  return [variables](const char* name) -> const char* {
    auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  };
}

const std::map<std::string, std::string> kJob = {
    {"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", "n[1-3]"}, {"SLURM_TASKS_PER_NODE", "2(x3)"}};

constexpr const char* kNoHosts = "program: hvdrun-bench\nmatrix:\n  servers: [1, 2]\n";
constexpr const char* kHosts = "program: hvdrun-bench\nhosts: a,b\nmatrix:\n  servers: [1, 2]\n";

TEST(ChooseSlurmAllocation, InsideAnAllocationAnExperimentWithoutHostsRunsOnIt) {
  StatusOr<std::optional<SlurmAllocation>> chosen =
      ChooseSlurmAllocation(Parse(kNoHosts), false, Environment(kJob));
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  ASSERT_TRUE(chosen.value().has_value());
  EXPECT_EQ(chosen.value()->job_id, "42");
  EXPECT_EQ(chosen.value()->nodes, (std::vector<HostSlots>{{"n1", 2, ""}, {"n2", 2, ""}, {"n3", 2, ""}}));
}

TEST(ChooseSlurmAllocation, TheExperimentsHostsWinUnlessSlurmIsAsked) {
  StatusOr<std::optional<SlurmAllocation>> chosen =
      ChooseSlurmAllocation(Parse(kHosts), false, Environment(kJob));
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  EXPECT_FALSE(chosen.value().has_value());
  chosen = ChooseSlurmAllocation(Parse(kHosts), true, Environment(kJob));
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  ASSERT_TRUE(chosen.value().has_value());
  EXPECT_EQ(chosen.value()->nodes.size(), 3u);
}

TEST(ChooseSlurmAllocation, OutsideAnAllocation) {
  StatusOr<std::optional<SlurmAllocation>> chosen =
      ChooseSlurmAllocation(Parse(kNoHosts), false, Environment({}));
  ASSERT_TRUE(chosen.ok());
  EXPECT_FALSE(chosen.value().has_value());
  chosen = ChooseSlurmAllocation(Parse(kNoHosts), true, Environment({}));
  ASSERT_FALSE(chosen.ok());
  EXPECT_EQ(chosen.status().message(),
            "--slurm: not inside a Slurm allocation (SLURM_JOB_ID is not set); submit the experiment with "
            "sbatch (hvdrun-lab sbatch /labs/exp.yaml > job.sh; sbatch job.sh) or run it under salloc");
}

TEST(ChooseSlurmAllocation, MalformedVariablesAreNamed) {
  std::map<std::string, std::string> job = kJob;
  job["SLURM_TASKS_PER_NODE"] = "two";
  StatusOr<std::optional<SlurmAllocation>> chosen =
      ChooseSlurmAllocation(Parse(kNoHosts), false, Environment(job));
  ASSERT_FALSE(chosen.ok());
  EXPECT_NE(chosen.status().message().find("SLURM_TASKS_PER_NODE='two'"), std::string::npos)
      << chosen.status().message();
}

TEST(CheckSlurmTimeLimit, SlurmsFormats) {
  for (const char* ok : {"30", "10:00", "1:30:00", "2-0", "2-12:00", "1-00:00:00"}) {
    EXPECT_TRUE(CheckSlurmTimeLimit(ok).ok()) << ok;
  }
  for (const char* bad : {"", "1h", "1:2:3:4", "-5", "1-", "a-1", "1::2"}) {
    Status status = CheckSlurmTimeLimit(bad);
    ASSERT_FALSE(status.ok()) << bad;
    EXPECT_EQ(status.message(), "--time '" + std::string(bad) +
                                    "': not a Slurm time limit (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or "
                                    "D-HH:MM:SS)");
  }
}

TEST(BuildSbatchScript, NodesAndTasksOfTheLargestCell) {
  ExperimentConfig config = Parse(R"(name: scaling
program: hvdrun-bench
matrix:
  backend: [gloo, mpi]
  processes_per_server: [1, 2, 4]
  servers: [1, 2, 3]
exclude:
  - {processes_per_server: 4, servers: [2, 3]}
)");
  MachineFacts machine;
  machine.slurm = AllocationForSubmission(config);
  EXPECT_EQ(machine.slurm->nodes.size(), 3u);
  StatusOr<Matrix> matrix = ExpandMatrix(config, machine);
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  SbatchOptions options;
  options.lab_path = "/opt/hvdrun/bin/hvdrun-lab";
  options.experiment_path = "/labs/exp.yaml";
  options.results = "/home/student/lab results";
  options.time_limit = "1:30:00";
  options.partition = "gpu";
  EXPECT_EQ(
      BuildSbatchScript(config, matrix.value(), options).value(),
      "#!/bin/sh\n"
      "#SBATCH --job-name=scaling\n"
      "#SBATCH --nodes=3\n"
      "#SBATCH --ntasks-per-node=4\n"
      "#SBATCH --time=1:30:00\n"
      "#SBATCH --output=scaling-%j.out\n"
      "#SBATCH --partition=gpu\n"
      "# Written by hvdrun-lab sbatch from /labs/exp.yaml: 14 cells, the largest on 3 nodes with 4 "
      "processes per node. Each cell runs on the first nodes of the allocation it needs.\n"
      "exec /opt/hvdrun/bin/hvdrun-lab run /labs/exp.yaml --slurm --results '/home/student/lab results'\n");

  // Without a time, partition or output given, only the output is written, named after the job;
  // the nodes are those of the largest cell left after `exclude`.
  config = Parse(
      "name: one\nprogram: p\nmatrix:\n  np: [1, 2]\n  servers: [1, 2]\nexclude:\n  - {np: 1, servers: 2}\n");
  machine.slurm = AllocationForSubmission(config);
  matrix = ExpandMatrix(config, machine);
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  options = {};
  options.lab_path = "hvdrun-lab";
  options.experiment_path = "/e.yaml";
  options.results = "/r";
  options.force = true;
  EXPECT_EQ(
      BuildSbatchScript(config, matrix.value(), options).value(),
      "#!/bin/sh\n"
      "#SBATCH --job-name=one\n"
      "#SBATCH --nodes=2\n"
      "#SBATCH --ntasks-per-node=2\n"
      "#SBATCH --output=one-%j.out\n"
      "# Written by hvdrun-lab sbatch from /labs/exp.yaml: 3 cells, the largest on 2 nodes with 2 processes "
      "per node. Each cell runs on the first nodes of the allocation it needs.\n"
      "exec hvdrun-lab run /e.yaml --slurm --results /r --force\n");
}

// The words sbatch reads from an #SBATCH line after "#SBATCH" (Slurm's src/sbatch/opt.c,
// _get_argument): blanks separate them; '...' and "..." group bytes; a backslash keeps the next byte
// as it is, inside quotes too; an unquoted '#' ends the line.
std::vector<std::string> SbatchWords(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = '\0';
  for (size_t i = std::string("#SBATCH").size(); i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      in_word = true;
    } else if (quote != '\0') {
      if (c == quote) {
        quote = '\0';
      } else {
        word += c;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == '#') {
      break;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

TEST(SbatchDirectiveQuote, ReadsBackAsTheValue) {
  for (const std::string value :
       {"gpu", "out-%j.log", "my out.log", "a\"b", "a'b", "a\\b", "x # y", "$(touch x)"}) {
    EXPECT_EQ(SbatchWords("#SBATCH --output=" + SbatchDirectiveQuote(value)),
              std::vector<std::string>{"--output=" + value})
        << value;
  }
  EXPECT_EQ(SbatchDirectiveQuote("gpu"), "gpu");
  EXPECT_EQ(SbatchDirectiveQuote("a\"b\\c d"), "\"a\\\"b\\\\c d\"");
}

// Hostile values (the flags', the experiment file's path, the results directory) stay values: the
// script passes `sh -n`, each #SBATCH line reads back as its value, and run, it starts hvdrun-lab
// with exactly the arguments given and runs nothing else.
TEST(BuildSbatchScript, HostileValuesAddNoLineAndNoCommand) {
  e2e::ScratchDir dir;
  const std::string marker = dir.path() + "/INJECTED";
  const std::string touch = "touch " + marker;
  const std::string lab =
      dir.WriteFile("fake lab", "#!/bin/sh\nprintf '%s\\0' \"$@\" > \"$(dirname \"$0\")/args\"\n");
  ASSERT_EQ(::chmod(lab.c_str(), 0755), 0);
  ExperimentConfig config = Parse("name: hostile\nprogram: p\n");
  config.path = dir.path() + "/exp\n" + touch + " #$(" + touch + ")`" + touch + "`'.yaml";
  MachineFacts machine;
  machine.slurm = AllocationForSubmission(config);
  StatusOr<Matrix> matrix = ExpandMatrix(config, machine);
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  SbatchOptions options;
  options.lab_path = lab;
  options.experiment_path = config.path;
  options.results = dir.path() + "/res 'x' \"y\" $(" + touch + ")";
  options.partition = "gpu'; " + touch + "; '\"";
  options.output = "out \"$(" + touch + ")\" \\ #x %j.log";
  options.time_limit = "1:00:00";
  StatusOr<std::string> script = BuildSbatchScript(config, matrix.value(), options);
  ASSERT_TRUE(script.ok()) << script.status().message();
  const std::string path = dir.WriteFile("job.sh", script.value());

  std::vector<std::string> lines;
  for (size_t start = 0, end; start < script->size(); start = end + 1) {
    end = script->find('\n', start);
    lines.push_back(script->substr(start, end - start));
  }
  ASSERT_GE(lines.size(), 9u) << script.value();
  EXPECT_EQ(SbatchWords(lines[4]), std::vector<std::string>{"--time=1:00:00"});
  EXPECT_EQ(SbatchWords(lines[5]), std::vector<std::string>{"--output=" + options.output});
  EXPECT_EQ(SbatchWords(lines[6]), std::vector<std::string>{"--partition=" + options.partition});
  EXPECT_EQ(lines[7].rfind("# Written by hvdrun-lab sbatch from " + dir.path() + "/exp?touch ", 0), 0u)
      << lines[7];
  EXPECT_EQ(lines[8].rfind("exec ", 0), 0u) << lines[8];

  e2e::ProcessResult syntax = e2e::RunProcess({"/bin/sh", "-n", path}, std::chrono::seconds(30));
  EXPECT_EQ(syntax.exit_code, 0) << syntax;
  e2e::ProcessOptions in_dir;
  in_dir.working_dir = dir.path();
  e2e::ProcessResult ran = e2e::RunProcess({"/bin/sh", path}, std::chrono::seconds(30), in_dir);
  EXPECT_EQ(ran.exit_code, 0) << ran;
  EXPECT_FALSE(std::filesystem::exists(marker)) << script.value();
  const std::string args = e2e::ReadFileBytes(dir.path() + "/args");
  const std::vector<std::string> expected = {"run", options.experiment_path, "--slurm", "--results",
                                             options.results};
  std::string expected_bytes;
  for (const std::string& arg : expected) expected_bytes += arg + std::string(1, '\0');
  EXPECT_EQ(args, expected_bytes);
}

// A control character cannot be held by an #SBATCH line: refused, naming the flag.
TEST(BuildSbatchScript, ControlCharactersInDirectivesAreRefused) {
  ExperimentConfig config = Parse("name: one\nprogram: p\n");
  MachineFacts machine;
  machine.slurm = AllocationForSubmission(config);
  StatusOr<Matrix> matrix = ExpandMatrix(config, machine);
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  struct Case {
    std::string SbatchOptions::*field;
    const char* flag;
  };
  for (const Case& c :
       {Case{&SbatchOptions::partition, "--partition"}, Case{&SbatchOptions::output, "--output"},
        Case{&SbatchOptions::time_limit, "--time"}}) {
    SbatchOptions options;
    options.lab_path = "hvdrun-lab";
    options.experiment_path = "/e.yaml";
    options.results = "/r";
    options.*c.field = "gpu\necho INJECTED #";
    StatusOr<std::string> script = BuildSbatchScript(config, matrix.value(), options);
    ASSERT_FALSE(script.ok()) << c.flag;
    EXPECT_EQ(
        script.status().message(),
        std::string(c.flag) +
            " 'gpu?echo INJECTED #': holds a control character (a line break, a tab ...), which an #SBATCH "
            "line cannot hold");
  }
}

}  // namespace
}  // namespace hvdrun::lab
