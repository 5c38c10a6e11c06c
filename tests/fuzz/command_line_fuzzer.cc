// libFuzzer target for hvdrun's command line as the argument scanner reads it
// (launcher/command_line/argument_scanner.h) against hvdrun's real option table, and each option's
// value as the table applies it (ApplyOption: whole numbers, switches, variables, lists). The input's
// lines are the words. Checked beyond "no crash, no sanitizer report, no hang": an error is one
// non-empty line; an accepted line's options are rows of the table, every value option has its value
// and a switch none, and the command is the words after the options, unchanged. Nothing here reads a
// file or starts a process. Build and run: tests/fuzz/CMakeLists.txt.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/command_line/argument_scanner.h"
#include "launcher/command_line/launch_flags.h"
#include "launcher/command_line/option_table.h"

namespace {

std::vector<std::string> Words(std::string_view input) {
  std::vector<std::string> words;
  size_t start = 0;
  while (start <= input.size() && words.size() < 64) {
    const size_t end = std::min(input.find('\n', start), input.size());
    words.emplace_back(input.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

void CheckOneLine(const std::string& message) {
  if (message.empty() || message.find('\n') != std::string::npos) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string> words = Words(std::string_view(reinterpret_cast<const char*>(data), size));
  const std::vector<hvdrun::OptionSyntax>& syntax = hvdrun::OptionTableSyntax();
  hvdrun::StatusOr<hvdrun::ScannedCommandLine> scanned = hvdrun::ScanArguments(words, syntax);
  if (!scanned.ok()) {
    CheckOneLine(scanned.status().message());
    return 0;
  }
  const hvdrun::ScannedCommandLine& line = scanned.value();
  if (line.command.size() > words.size() ||
      !std::equal(line.command.begin(), line.command.end(), words.end() - line.command.size())) {
    std::abort();
  }
  hvdrun::LaunchFlags flags;
  for (const hvdrun::ScannedOption& option : line.options) {
    if (option.option >= syntax.size() || option.option >= hvdrun::OptionTable().size()) std::abort();
    const hvdrun::OptionSyntax& form = syntax[option.option];
    if (form.kind == hvdrun::OptionKind::kSwitch && !option.value.empty()) std::abort();
    if (form.kind != hvdrun::OptionKind::kSwitch && option.value.empty() && !form.value_may_be_empty) {
      std::abort();
    }
    hvdrun::Status applied =
        hvdrun::ApplyOption(hvdrun::OptionTable()[option.option], option.typed, option.value, flags);
    if (!applied.ok()) CheckOneLine(applied.message());
  }
  return 0;
}
