// The short examples of a user's own program under examples/, each built and run as its header
// tells a user to:
// - examples/allreduce/allreduce.cc is compiled with the C++ compiler against the installed
//   headers and library (HVDRUN_TEST_INSTALL_PREFIX, staged by the install_for_e2e fixture), not
//   as a target of this build, and run under the installed hvdrun with Gloo; and built again as a
//   user's CMake project (examples/allreduce/CMakeLists.txt, find_package(hvdrun)) and with the
//   flags `pkg-config --cflags --libs hvdrun` gives, both from the installed package files.
// - examples/torch_distributed/collectives.py, an unmodified torch.distributed program (env://,
//   Gloo), runs under hvdrun and sees the ranks, world size and local ranks hvdrun planned: the
//   environment contract with PyTorch. It runs with Debian's python3-torch through
//   /usr/bin/python3, since the first python3 on PATH may be another interpreter without torch.
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/process_runner.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

// Compiling against the installed headers takes a few seconds, more on a busy machine.
constexpr std::chrono::milliseconds kCompileTimeout{120'000};

// The example built in `dir` as its header comment says, with warnings as errors so that the
// installed headers are seen to compile cleanly in a user's program.
ProcessResult BuildAllreduceExample(const std::string& dir) {
  const std::string prefix = HVDRUN_TEST_INSTALL_PREFIX;
  const std::string lib_dir = prefix + "/" + HVDRUN_TEST_INSTALL_LIBDIR;
  return RunProcess(
      {HVDRUN_TEST_CXX, "-std=c++17", "-Wall", "-Wextra", "-Werror",
       std::string(HVDRUN_TEST_EXAMPLES_DIR) + "/allreduce/allreduce.cc", "-I" + prefix + "/include",
       "-L" + lib_dir, "-Wl,-rpath," + lib_dir, "-lhvdrun", "-o", dir + "/allreduce"},
      kCompileTimeout);
}

// Runs the allreduce example built at `program` on two ranks, and checks what they print:
// (rank + 1) * (1 2 3 4) summed over ranks 0 and 1.
void ExpectAllreduceSumsOverTwoRanks(const std::string& program) {
  ProcessResult result = RunHvdrun({"-np", "2", "--gloo", program});
  ASSERT_EQ(result.exit_code, 0) << result;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string line = "[" + std::to_string(rank) + "]<stdout>:rank " + std::to_string(rank) +
                             " of 2: sum over ranks of (rank + 1) * (1 2 3 4) = 3 6 9 12\n";
    EXPECT_NE(result.stdout_text.find(line), std::string::npos) << line << result;
  }
  EXPECT_EQ(result.stderr_text, "") << result;
}

TEST(AllreduceExampleTest, BuildsAgainstTheInstalledLibraryAndSumsOverTwoRanks) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  ProcessResult build = BuildAllreduceExample(dir.path());
  ASSERT_EQ(build.exit_code, 0) << "compiling examples/allreduce against the installed hvdrun\n" << build;
  ExpectAllreduceSumsOverTwoRanks(dir.path() + "/allreduce");
}

// A user's CMake project: find_package(hvdrun 0.2) finds the installed package (hvdrunConfig.cmake
// and its version file under PREFIX/LIBDIR/cmake/hvdrun), and hvdrun::hvdrun brings the include
// directory, the C++ standard and the library.
TEST(AllreduceExampleTest, BuildsAsACMakeProjectWithFindPackage) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string build_dir = dir.path() + "/build";
  ProcessResult configure = RunProcess(
      {HVDRUN_TEST_CMAKE, "-S", std::string(HVDRUN_TEST_EXAMPLES_DIR) + "/allreduce", "-B", build_dir,
       std::string("-DCMAKE_PREFIX_PATH=") + HVDRUN_TEST_INSTALL_PREFIX,
       std::string("-DCMAKE_CXX_COMPILER=") + HVDRUN_TEST_CXX, "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Werror"},
      kCompileTimeout);
  ASSERT_EQ(configure.exit_code, 0) << configure;
  ProcessResult build = RunProcess({HVDRUN_TEST_CMAKE, "--build", build_dir}, kCompileTimeout);
  ASSERT_EQ(build.exit_code, 0) << build;
  ExpectAllreduceSumsOverTwoRanks(build_dir + "/allreduce");
}

// A release's package is found for a request of its own major.minor only, while the version is 0.x.
TEST(AllreduceExampleTest, FindPackageRefusesAnotherMinorVersion) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  dir.WriteFile("CMakeLists.txt",
                "cmake_minimum_required(VERSION 3.16)\nproject(old LANGUAGES CXX)\n"
                "find_package(hvdrun 0.1 REQUIRED)\n");
  ProcessResult configure = RunProcess({HVDRUN_TEST_CMAKE, "-S", dir.path(), "-B", dir.path() + "/build",
                                        std::string("-DCMAKE_PREFIX_PATH=") + HVDRUN_TEST_INSTALL_PREFIX,
                                        std::string("-DCMAKE_CXX_COMPILER=") + HVDRUN_TEST_CXX},
                                       kCompileTimeout);
  EXPECT_NE(configure.exit_code, 0) << configure;
  EXPECT_NE(configure.stderr_text.find("hvdrunConfig.cmake, version: " HVDRUN_TEST_VERSION),
            std::string::npos)
      << configure;
}

// A build without CMake: the flags of the installed hvdrun.pc, whose prefix is the one installed to.
TEST(AllreduceExampleTest, BuildsWithPkgConfigFlags) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string prefix = HVDRUN_TEST_INSTALL_PREFIX;
  const std::string lib_dir = prefix + "/" + HVDRUN_TEST_INSTALL_LIBDIR;
  const std::string pkg_config = HVDRUN_TEST_PKG_CONFIG;
  if (pkg_config.empty()) {
    GTEST_SKIP() << "no pkg-config found when configuring (Debian: apt install pkgconf)";
  }
  ProcessOptions options;
  options.extra_env = {"PKG_CONFIG_PATH=" + lib_dir + "/pkgconfig"};
  ProcessResult flags = RunProcess({pkg_config, "--cflags", "--libs", "hvdrun"}, kRunTimeout, options);
  ASSERT_EQ(flags.exit_code, 0) << flags;
  EXPECT_EQ(flags.stdout_text, "-I" + prefix + "/include -L" + lib_dir + " -lhvdrun \n") << flags;
  ProcessResult version = RunProcess({pkg_config, "--modversion", "hvdrun"}, kRunTimeout, options);
  EXPECT_EQ(version.stdout_text, HVDRUN_TEST_VERSION "\n") << version;

  std::vector<std::string> command = {
      HVDRUN_TEST_CXX, "-std=c++17", "-Wall",
      "-Wextra",       "-Werror",    std::string(HVDRUN_TEST_EXAMPLES_DIR) + "/allreduce/allreduce.cc"};
  std::istringstream words(flags.stdout_text);
  for (std::string word; words >> word;) command.push_back(word);
  command.insert(command.end(), {"-Wl,-rpath," + lib_dir, "-o", dir.path() + "/allreduce"});
  ProcessResult build = RunProcess(command, kCompileTimeout);
  ASSERT_EQ(build.exit_code, 0) << build;
  ExpectAllreduceSumsOverTwoRanks(dir.path() + "/allreduce");
}

TEST(AllreduceExampleTest, RunWithoutHvdrunItSaysWhyAndExitsOne) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  ProcessResult build = BuildAllreduceExample(dir.path());
  ASSERT_EQ(build.exit_code, 0) << build;

  ProcessOptions options;
  options.unset_env = {"HVDRUN_RANK"};
  ProcessResult result = RunProcess({dir.path() + "/allreduce"}, kRunTimeout, options);
  EXPECT_EQ(result.exit_code, 1) << result;
  EXPECT_EQ(result.stdout_text, "") << result;
  EXPECT_EQ(result.stderr_text, "allreduce: HVDRUN_RANK is not set: run this program under hvdrun\n")
      << result;
}

constexpr const char* kPython = "/usr/bin/python3";
// Importing torch takes seconds per rank on a 2-core machine; three at once take longer.
constexpr std::chrono::milliseconds kTorchRunTimeout{150'000};

// What rank `rank` of `world` prints: torch's view of its place, then the results of its
// collectives (see collectives.py).
std::string ExpectedTorchLine(int rank, int world, int local_rank) {
  int sum = world * (world + 1) / 2;
  std::string gathered;
  for (int r = 0; r < world; ++r) {
    if (r > 0) gathered += ',';
    gathered += std::to_string(r * r);
  }
  return "[" + std::to_string(rank) + "]<stdout>:rank " + std::to_string(rank) + " of " +
         std::to_string(world) + " local " + std::to_string(local_rank) + ": sum " + std::to_string(sum) +
         " broadcast " + std::to_string(1000 + world - 1) + " gather " + gathered + "\n";
}

class TorchDistributedExampleTest : public testing::Test {
 protected:
  void SetUp() override {
    ProcessResult probe =
        RunProcess({kPython, "-c", "import torch.distributed as d; assert d.is_gloo_available()"},
                   std::chrono::seconds(60));
    ASSERT_EQ(probe.exit_code, 0) << kPython << " cannot import torch.distributed with Gloo; "
                                  << "install Debian's python3-torch (scripts/install-deps.sh does)\n"
                                  << probe;
  }

  static std::string Script() {
    return std::string(HVDRUN_TEST_EXAMPLES_DIR) + "/torch_distributed/collectives.py";
  }
};

TEST_F(TorchDistributedExampleTest, ThreeRanksOnOneHostInitFromEnv) {
  ProcessResult result = RunProcess({HvdrunPath(), "-np", "3", kPython, Script()}, kTorchRunTimeout);
  ASSERT_EQ(result.exit_code, 0) << result;
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_NE(result.stdout_text.find(ExpectedTorchLine(rank, 3, rank)), std::string::npos)
        << ExpectedTorchLine(rank, 3, rank) << result;
  }
}

// Two hosts (both this machine): MASTER_ADDR names rank 0's host, LOCAL_RANK restarts per host.
TEST_F(TorchDistributedExampleTest, ThreeRanksOnTwoHostsInitFromEnv) {
  ProcessResult result = RunProcess(
      {HvdrunPath(), "-np", "3", "-H", "localhost:2,127.0.0.1:1", kPython, Script()}, kTorchRunTimeout);
  ASSERT_EQ(result.exit_code, 0) << result;
  const int local_ranks[] = {0, 1, 0};
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_NE(result.stdout_text.find(ExpectedTorchLine(rank, 3, local_ranks[rank])), std::string::npos)
        << ExpectedTorchLine(rank, 3, local_ranks[rank]) << result;
  }
}

}  // namespace
}  // namespace hvdrun::e2e
