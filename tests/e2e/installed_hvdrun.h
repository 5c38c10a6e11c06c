// The programs under test: hvdrun as `cmake --install` laid it out (installed_program.h, with
// hvdrun-agent beside it), and the rank program hvdrun-test-rank (HVDRUN_TEST_RANK_PATH).
#ifndef HVDRUN_TESTS_E2E_INSTALLED_HVDRUN_H_
#define HVDRUN_TESTS_E2E_INSTALLED_HVDRUN_H_

#include <chrono>
#include <string>
#include <vector>

#include "tests/e2e/process_runner.h"

namespace hvdrun::e2e {

// The limit of one hvdrun run in a test: far above what any run here needs, far below ctest's.
inline constexpr std::chrono::milliseconds kRunTimeout{30'000};

std::string HvdrunPath();
std::string TestRankPath();

// Runs the installed hvdrun with `args` (hvdrun's own argv[0] is added) and waits up to kRunTimeout.
ProcessResult RunHvdrun(const std::vector<std::string>& args, const ProcessOptions& options = {});

// Starts the installed hvdrun with `args` and leaves it running.
RunningProcess StartHvdrun(const std::vector<std::string>& args, const ProcessOptions& options = {});

// `args` with the rank program's path in front: the command part of an hvdrun command line.
std::vector<std::string> RankCommand(const std::vector<std::string>& args);

// Concatenates argument lists, for building command lines from parts.
std::vector<std::string> Concat(std::initializer_list<std::vector<std::string>> parts);

}  // namespace hvdrun::e2e

#endif  // HVDRUN_TESTS_E2E_INSTALLED_HVDRUN_H_
