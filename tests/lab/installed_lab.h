// The programs under test, as `cmake --install` laid them out (tests/e2e/installed_program.h):
// hvdrun-lab with hvdrun, hvdrun-agent and hvdrun-bench (and hvdrun-trainer, when built) beside it.
#ifndef HVDRUN_TESTS_LAB_INSTALLED_LAB_H_
#define HVDRUN_TESTS_LAB_INSTALLED_LAB_H_

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/process_runner.h"

namespace hvdrun::lab_test {

// The limit of one hvdrun-lab command in these tests: far above what the small matrices here need.
inline constexpr std::chrono::milliseconds kLabTimeout{120'000};

// Runs the installed hvdrun-lab with `args` and waits up to kLabTimeout.
e2e::ProcessResult RunLab(const std::vector<std::string>& args);

// Starts the installed hvdrun-lab with `args` and leaves it running.
e2e::RunningProcess StartLab(const std::vector<std::string>& args);

// The JSON file at `path`; null when it cannot be read or parsed.
nlohmann::json ReadJson(const std::string& path);

// Processes whose working directory is under `dir`: what a run in `dir` left running.
std::vector<pid_t> ProcessesWorkingUnder(const std::string& dir);

}  // namespace hvdrun::lab_test

#endif  // HVDRUN_TESTS_LAB_INSTALLED_LAB_H_
