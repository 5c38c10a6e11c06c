// hvdrun-lab end to end on hostile and careless input: each input that once crashed, hung, or was
// quietly taken is refused by the installed program with one line and its exit code, or, for a
// damaged run's file, left out of a report that is still written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/e2e/console_output.h"
#include "tests/e2e/scratch_dir.h"
#include "tests/lab/installed_lab.h"

namespace hvdrun::lab_test {
namespace {

namespace fs = std::filesystem;
using e2e::ProcessResult;
using e2e::ScratchDir;

// A copy of tests/lab/fixtures/scaling in `scratch`: its directory.
std::string CopyFixture(const ScratchDir& scratch) {
  std::string dir = scratch.path() + "/scaling";
  fs::copy(std::string(HVDRUN_LAB_FIXTURES_DIR) + "/scaling", dir, fs::copy_options::recursive);
  return dir;
}

// One line on stderr, and nothing written to the terminal as a control character.
void ExpectOneLine(const ProcessResult& result) {
  ASSERT_FALSE(result.stderr_text.empty()) << result;
  EXPECT_EQ(result.stderr_text.find('\n'), result.stderr_text.size() - 1) << result;
  EXPECT_EQ(result.stderr_text.find('\r'), std::string::npos) << result;
}

// A rank's report nested 200,000 levels deep once crashed `report` (the stack): it is left out and
// named, and the report is written from the rest.
TEST(LabBadInput, ADeeplyNestedRankReportIsLeftOutNamed) {
  ScratchDir scratch;
  const std::string dir = CopyFixture(scratch);
  const std::string rank =
      dir + "/cells/backend-gloo_np-2_servers-1_model-resnet50/repeat-1/hvdrun/ranks/rank-1.json";
  ASSERT_TRUE(fs::exists(rank));
  std::ofstream(rank) << "{\"summary\": " << std::string(200000, '[') << std::string(200000, ']') << "}";
  ProcessResult result = RunLab({"report", dir});
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_EQ(result.term_signal, 0) << result;
  EXPECT_EQ(result.stderr_text,
            "hvdrun-lab: could not read " + rank +
                ": nested deeper than 64 levels of objects and lists, the most hvdrun-lab reads\n");
  EXPECT_TRUE(fs::exists(dir + "/report.md"));
}

// "repeats": 1000000 once made `report` list a million runs not made yet (it did not end); 1 to
// 1000 is what `run` takes, and `report` takes the same.
TEST(LabBadInput, RepeatsOutOfRunsRangeAreRefusedByReport) {
  ScratchDir scratch;
  const std::string dir = CopyFixture(scratch);
  nlohmann::json experiment = ReadJson(dir + "/experiment.json");
  ASSERT_TRUE(experiment.is_object());
  experiment["repeats"] = 1000000;
  std::ofstream(dir + "/experiment.json") << experiment.dump();
  ProcessResult result = RunLab({"report", dir});
  EXPECT_EQ(result.exit_code, 3) << result;
  EXPECT_EQ(result.stderr_text,
            "hvdrun-lab: " + dir +
                "/experiment.json: \"repeats\" is 1000000; expected a whole number from 1 to "
                "1000\n");
  EXPECT_FALSE(fs::exists(dir + "/report.md"));
}

// `validate` says valid only for what `run` starts: values every run would fail on are refused.
TEST(LabBadInput, ValidateRefusesWhatEveryRunWouldFailOn) {
  ScratchDir scratch;
  for (const char* text : {"program: hvdrun-trainer\nmatrix:\n  threads: [0]\n",
                           "program: hvdrun-trainer\nmatrix:\n  fusion_threshold: [x]\n",
                           "program: hvdrun-trainer\nhvdrun:\n  network_interface: 'lo,'\n",
                           "program: p\nmatrix:\n  processes_per_server: [1048576]\n  servers: [4096]\n",
                           "program: p\n\"hots\\r\": localhost\n"}) {
    const std::string path = scratch.WriteFile("exp.yaml", text);
    ProcessResult result = RunLab({"validate", path});
    EXPECT_EQ(result.exit_code, 2) << text << result;
    ExpectOneLine(result);
    EXPECT_EQ(result.stderr_text.rfind("hvdrun-lab: " + path + ":", 0), 0u) << result;
  }
}

// A line break in an sbatch value once added a command to the script; a value that would break
// its line is refused, and none is printed.
TEST(LabBadInput, SbatchRefusesALineBreakInAValue) {
  ScratchDir scratch;
  const std::string path = scratch.WriteFile("exp.yaml", "name: one\nprogram: p\n");
  for (const char* flag : {"--partition", "--output"}) {
    ProcessResult result = RunLab({"sbatch", path, flag, "gpu\necho INJECTED #"});
    EXPECT_EQ(result.exit_code, 2) << result;
    EXPECT_EQ(result.stdout_text, "") << result;
    EXPECT_EQ(result.stderr_text, "hvdrun-lab: " + std::string(flag) +
                                      " 'gpu?echo INJECTED #': holds a control character (a line break, a "
                                      "tab ...), which an #SBATCH line cannot hold\n");
  }
}

// A flag's value is never the next flag, nor empty; CLI11's own words do not reach the user.
TEST(LabBadInput, CommandLineErrorsAreHvdrunLabsOwn) {
  struct Case {
    std::vector<std::string> args;
    const char* error;
  };
  const Case cases[] = {
      {{"run", "e.yaml", "--results", "--force"},
       "--results: '--force' looks like a flag, not a directory (write one that starts with '-' as "
       "./--force) (see "
       "hvdrun-lab run --help)"},
      {{"run", "e.yaml", "--results", ""},
       "--results: the value is empty; give a directory (see hvdrun-lab run --help)"},
      {{"run", "e.yaml", "--results"}, "--results: the value is missing (see hvdrun-lab run --help)"},
      {{"run", "e.yaml", "--results", "a", "--results", "b"},
       "--results is given more than once (see hvdrun-lab run --help)"},
      {{"run", "a.yaml", "b.yaml"}, "run: unexpected argument 'b.yaml' (see hvdrun-lab run --help)"},
      {{"report", "--frob"}, "report: unknown flag '--frob' (see hvdrun-lab report --help)"},
      {{"validate"},
       "validate: give the experiment file: hvdrun-lab validate EXPERIMENT.yaml (see hvdrun-lab "
       "validate --help)"},
      {{"frob"}, "'frob' is not a command (run, report, validate or sbatch; see hvdrun-lab --help)"},
  };
  for (const Case& c : cases) {
    ProcessResult result = RunLab(c.args);
    EXPECT_EQ(result.exit_code, 2) << result;
    EXPECT_EQ(result.stderr_text, "hvdrun-lab: " + std::string(c.error) + "\n") << result;
  }
}

}  // namespace
}  // namespace hvdrun::lab_test
