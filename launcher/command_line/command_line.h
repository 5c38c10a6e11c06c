// ParseCommandLine: hvdrun's argv into the LaunchOptions a job runs with.
//
// The words are read as horovodrun's argparse reads them (argument_scanner.h), against the option
// table (option_table.h); --config-file's settings apply where the command line gave none
// (config_file.h); then the flags are checked and resolved (launch_flags.h). --help, --version and
// --check-build print and exit 0 once the command line has been read without error; any error
// (an unknown or misspelt option included) is one line and exit code 2, never help.
#ifndef HVDRUN_LAUNCHER_COMMAND_LINE_COMMAND_LINE_H_
#define HVDRUN_LAUNCHER_COMMAND_LINE_COMMAND_LINE_H_

#include <optional>
#include <string>

#include "common/environment_reader.h"
#include "launcher/launch_options.h"

namespace hvdrun {

// The outcome of parsing: run with `options`, or exit at once with `exit_code` after --help,
// --version or --check-build (already printed) or a usage error (`error` holds its one line).
struct ParsedCommandLine {
  std::optional<LaunchOptions> options;
  int exit_code = 0;
  std::string error;
};

// Parses hvdrun's argv. `getenv` looks up hvdrun's environment (a bare `-x NAME`, HOROVOD_* that
// choose the controller or a timeout). `hvdrun_path` is this program's, for --check-build.
ParsedCommandLine ParseCommandLine(int argc, const char* const* argv, const EnvironmentLookup& getenv,
                                   const std::string& hvdrun_path = "");

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_COMMAND_LINE_COMMAND_LINE_H_
