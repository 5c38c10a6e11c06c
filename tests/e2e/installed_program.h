// The programs of the staged install, as `cmake --install` laid them out for the end-to-end tests
// (the install_for_e2e fixture): hvdrun, hvdrun-agent, hvdrun-bench, hvdrun-lab, hvdrun-trainer, all
// in HVDRUN_TEST_BIN_DIR.
//
// Inline, in a header: HVDRUN_TEST_BIN_DIR is a compile definition of each test binary that drives
// the installed programs, not of the library they share. Include it from .cc files only, so that a
// header that does not need it (installed_hvdrun.h, installed_lab.h) compiles without it.
#ifndef HVDRUN_TESTS_E2E_INSTALLED_PROGRAM_H_
#define HVDRUN_TESTS_E2E_INSTALLED_PROGRAM_H_

#include <string>
#include <vector>

#include "tests/e2e/process_runner.h"

namespace hvdrun::e2e {

// The installed program `name`: "hvdrun-bench" is HVDRUN_TEST_BIN_DIR/hvdrun-bench.
inline std::string InstalledProgram(const std::string& name) {
  return std::string(HVDRUN_TEST_BIN_DIR) + "/" + name;
}

// Starts the installed program `name` with `args` (its argv[0] is added) and leaves it running.
inline RunningProcess StartInstalled(const std::string& name, const std::vector<std::string>& args,
                                     const ProcessOptions& options = {}) {
  std::vector<std::string> argv = {InstalledProgram(name)};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunningProcess::Start(argv, options);
}

}  // namespace hvdrun::e2e

#endif  // HVDRUN_TESTS_E2E_INSTALLED_PROGRAM_H_
