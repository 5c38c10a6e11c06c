// ScanArguments: a command line split into options and the command, the way horovodrun's argparse
// reads it, with every error in hvdrun's own words.
//
// How a word is read, left to right:
//   `--` ends the options: the words after it are the command. The first word that does not start
//   with '-' (or is `-` alone) starts the command. Nothing at or after the command is looked at.
//   `--name` and `--name=VALUE`: an option's long name, or a prefix of exactly one option's name
//   (`--fusion 8` is `--fusion-threshold-mb 8`); a prefix of several is an error listing them.
//   `-name` and `-name=VALUE`: an option's single-dash name (`-np`, `-hostfile`, `-cb`), or a prefix
//   of one; a word that starts with a one-letter option taking a value carries that value
//   (`-Hserver1:2`, `-p2222`, `-xNAME=V`). A word that can be read more than one of these ways is an
//   error naming each reading, as argparse's is (`-pre`: `-prefix-timestamp`, or `-p` with `re`).
// Values: a value option takes the text after its `=`, else the next word — unless that word is
// itself an option (it starts with '-', holds no space, and is not a negative number: write
// `--mpi-args=-gpu` for such a value). A value may be empty only where the option says so. A switch
// takes no value (`--dry-run=no` is an error). A value option given twice is an error; a list
// option (-x) may be repeated; a switch given twice is the same switch. A pair option
// (--blacklist-cooldown-range MIN MAX) takes two values by the same rule, each a word of its own.
//
// Every error is one line that names the option as typed, the value when there is one, and what is
// expected. Pure and thread-safe.
#ifndef HVDRUN_LAUNCHER_COMMAND_LINE_ARGUMENT_SCANNER_H_
#define HVDRUN_LAUNCHER_COMMAND_LINE_ARGUMENT_SCANNER_H_

#include <cstddef>
#include <string>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun {

enum class OptionKind {
  kSwitch,  // no value
  kValue,   // one value, given at most once
  kList,    // one value each time, repeatable
  kPair,    // two values, the next two words (or =FIRST and the next word), given at most once;
            // ScannedOption::value holds them joined by one space
};

// What the scanner needs to know of one option.
struct OptionSyntax {
  // Every spelling, each starting with '-' ("-np", "--num-proc"); the last is the canonical long
  // name, which errors and LaunchFlags::given use.
  std::vector<std::string> names;
  OptionKind kind = OptionKind::kSwitch;
  // What the value is, for errors and --help ("N", "DIR").
  std::string value_name;
  bool value_may_be_empty = false;
};

// One option found on the command line.
struct ScannedOption {
  size_t option = 0;  // index into the syntax table
  std::string typed;  // the name as typed ("-np", "--fusion"), without "=VALUE"
  std::string value;  // empty for a switch
};

struct ScannedCommandLine {
  std::vector<ScannedOption> options;  // in the order typed
  std::vector<std::string> command;    // from the first word that is not an option
};

StatusOr<ScannedCommandLine> ScanArguments(const std::vector<std::string>& args,
                                           const std::vector<OptionSyntax>& syntax);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_COMMAND_LINE_ARGUMENT_SCANNER_H_
