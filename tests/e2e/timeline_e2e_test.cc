// hvdrun --timeline-filename end to end: every rank's libhvdrun timeline comes back to hvdrun and
// is merged into one Chrome trace, over Gloo and over Open MPI's mpirun, and also when the job is
// stopped in the middle.
#include <glob.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/installed_program.h"
#include "tests/e2e/process_runner.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

const std::string kBench = InstalledProgram("hvdrun-bench");

// The merged file as JSON; a file that is not a JSON array fails the test.
json ReadTrace(const std::string& path) {
  const std::string text = ReadFileBytes(path);
  json trace = json::parse(text, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(trace.is_array()) << path << " is not a JSON array: " << text.substr(0, 2000);
  return trace.is_array() ? trace : json::array();
}

// Events by (pid, name).
std::map<std::pair<int, std::string>, int> CountByRankAndName(const json& trace) {
  std::map<std::pair<int, std::string>, int> counts;
  for (const json& event : trace) {
    if (event.contains("pid") && event["pid"].is_number_integer()) {
      ++counts[{event["pid"].get<int>(), event.value("name", "")}];
    }
  }
  return counts;
}

TEST(MergedTimelineTest, GlooRanksTimelinesAreMergedOneProcessPerRankAndKeptWithTheResults) {
  ScratchDir dir;
  const std::string timeline = dir.path() + "/timeline.json";
  const std::string results = dir.path() + "/results";
  ProcessResult result =
      RunHvdrun({"-np", "2", "--gloo", "--results", results, "--timeline-filename", timeline,
                 "--timeline-mark-cycles", kBench, "--replay", "resnet18", "--iters", "2", "--warmup", "1"});
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.stderr_text.find("hvdrun: timeline: 2 ranks, "), std::string::npos) << result;
  EXPECT_EQ(result.stderr_text.find("hvdrun: timeline: rank "), std::string::npos)
      << "no rank's is incomplete" << result;
  const auto counts = CountByRankAndName(ReadTrace(timeline));
  for (int rank = 0; rank < 2; ++rank) {
    // Both ranks on this machine: their allreduces go through its shared memory, which names them.
    for (const char* name : {"ALLREDUCE", "NEGOTIATE_ALLREDUCE", "QUEUE", "SHM_ALLREDUCE", "CYCLE_START",
                             "process_name", "hvdrun_timeline_clock"}) {
      EXPECT_GT((counts.count({rank, name}) != 0U ? counts.at({rank, name}) : 0), 0)
          << "rank " << rank << " has no " << name;
    }
    // The ranks' own files, as they sent them, stay with the results.
    const json own = ReadTrace(results + "/timeline/rank-" + std::to_string(rank) + ".json");
    EXPECT_GT(own.size(), 10U);
  }
}

TEST(MergedTimelineTest, UnderMpirunHorovodsVariableNamesTheMergedFile) {
  ScratchDir dir;
  const std::string timeline = dir.path() + "/mpi-timeline.json";
  // Shared memory off: allreduces are MPI's calls, and named so.
  ProcessResult result =
      RunHvdrun({"-np", "2", "--mpi", "--shared-memory", "off", "-x", "HOROVOD_TIMELINE=" + timeline, kBench,
                 "--replay", "resnet18", "--iters", "2", "--warmup", "1"});
  ASSERT_EQ(result.exit_code, 0) << result;
  const auto counts = CountByRankAndName(ReadTrace(timeline));
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_GT((counts.count({rank, "MPI_ALLREDUCE"}) != 0U ? counts.at({rank, "MPI_ALLREDUCE"}) : 0), 0)
        << "rank " << rank;
  }
}

// The newest rank-1 file ranks write on this machine while they run, once it holds some events.
bool RankFileGrew(const std::set<std::string>& before) {
  glob_t found{};
  bool grew = false;
  if (::glob("/tmp/hvdrun-*-timeline/rank-1.json", 0, nullptr, &found) == 0) {
    for (size_t i = 0; i < found.gl_pathc; ++i) {
      struct stat info {};
      grew = grew || (before.count(found.gl_pathv[i]) == 0 && ::stat(found.gl_pathv[i], &info) == 0 &&
                      info.st_size > 4096);
    }
  }
  ::globfree(&found);
  return grew;
}

std::set<std::string> RankFilesNow() {
  std::set<std::string> files;
  glob_t found{};
  if (::glob("/tmp/hvdrun-*-timeline/rank-1.json", 0, nullptr, &found) == 0) {
    for (size_t i = 0; i < found.gl_pathc; ++i) files.insert(found.gl_pathv[i]);
  }
  ::globfree(&found);
  return files;
}

TEST(MergedTimelineTest, AJobStoppedMidwayStillGivesAValidMergedFileWithEveryRanksEvents) {
  ScratchDir dir;
  const std::string timeline = dir.path() + "/stopped.json";
  const std::set<std::string> before = RankFilesNow();
  RunningProcess hvdrun = StartHvdrun({"-np", "2", "--gloo", "--timeline-filename", timeline, kBench,
                                       "--replay", "resnet18", "--iters", "100000", "--warmup", "1"});
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(30'000);
  while (!RankFileGrew(before) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  // The ranks die of the stop's SIGTERM without ending their runtimes: hvdrun takes each rank's own
  // file, as far as its last flush.
  hvdrun.Signal(SIGTERM);
  ProcessResult result = hvdrun.Wait(milliseconds(60'000));
  EXPECT_FALSE(result.timed_out) << result;
  EXPECT_NE(result.stderr_text.find("the rank did not send it"), std::string::npos) << result;
  const auto counts = CountByRankAndName(ReadTrace(timeline));
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_GT((counts.count({rank, "SHM_ALLREDUCE"}) != 0U ? counts.at({rank, "SHM_ALLREDUCE"}) : 0), 0)
        << "rank " << rank << result;
  }
}

}  // namespace
}  // namespace hvdrun::e2e
