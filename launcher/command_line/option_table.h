// The option table: every option of hvdrun, declared once — its spellings, whether it takes a
// value, its help, where its value goes, and the key of horovodrun's --config-file that sets it.
//
// An option's value goes either into a field of LaunchFlags (the launcher's own settings, checked
// by the resolvers of launch_flags.h), or to every rank as a variable (Horovod's names, which
// libhvdrun reads: runtime/runtime_environment.cc), checked here by the row's ValueCheck. An option
// of the second kind is one row and nothing else: adding horovodrun's --autotune-warmup-samples is
// {names, kValue, "N", help, variable HOROVOD_AUTOTUNE_WARMUP_SAMPLES, WholeNumberCheck, config key}.
//
// Rows that set one thing share a setting (--hierarchical-allgather and --no-hierarchical-allgather;
// --gloo, --mpi and --nccl): two of them on one command line are an error, and a setting given on
// the command line is not taken from --config-file (the command line wins, as in horovodrun).
#ifndef HVDRUN_LAUNCHER_COMMAND_LINE_OPTION_TABLE_H_
#define HVDRUN_LAUNCHER_COMMAND_LINE_OPTION_TABLE_H_

#include <string>
#include <variant>
#include <vector>

#include "hvdrun/status.h"
#include "launcher/command_line/argument_scanner.h"
#include "launcher/command_line/launch_flags.h"

namespace hvdrun {

// Checks an option's value for the ranks and returns it in the variable's form; the error names
// `shown` (the option as typed, or its config file place).
using ValueCheck = StatusOr<std::string> (*)(const std::string& shown, const std::string& text);

// Where a row's value goes: nowhere of its own (the setting's variable below), or a LaunchFlags field.
using FlagField = std::variant<std::monostate, std::string LaunchFlags::*, bool LaunchFlags::*,
                               std::vector<std::string> LaunchFlags::*>;

struct OptionRow {
  OptionSyntax syntax;
  // --help's text; nullptr: the row is left out of --help (an old spelling horovodrun still takes).
  const char* help = nullptr;
  // A heading --help prints before this row; nullptr: none.
  const char* section = nullptr;
  FlagField field;
  // The variable the option sets for every rank, or nullptr.
  const char* variable = nullptr;
  // For a value: its check and conversion. For a switch: `constant` is what it sets (a bool field: "1"
  // sets true, "0" false; a variable: its value).
  ValueCheck check = nullptr;
  const char* constant = nullptr;
  // The setting the row belongs to; nullptr: its own (its canonical long name, or its variable).
  const char* setting = nullptr;
  // horovodrun's --config-file key ("params.fusion_threshold_mb"); for a switch, the YAML boolean
  // that selects this row (`config_when`): stall_check.enabled true is --stall-check.
  const char* config_key = nullptr;
  bool config_when = true;
};

// Every row, in --help's order.
const std::vector<OptionRow>& OptionTable();
// The table's syntax, row by row, for ScanArguments.
const std::vector<OptionSyntax>& OptionTableSyntax();

// The row's canonical long name ("--num-proc": the last of its names).
const std::string& CanonicalName(const OptionRow& row);
// The setting the row belongs to (OptionRow::setting).
std::string SettingOf(const OptionRow& row);

// Applies `value` (ignored for a switch) of `row`, named `shown` in errors, to `flags`: its field,
// or its variable checked and converted.
Status ApplyOption(const OptionRow& row, const std::string& shown, const std::string& value,
                   LaunchFlags& flags);

// hvdrun --help.
std::string HelpText();

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_COMMAND_LINE_OPTION_TABLE_H_
