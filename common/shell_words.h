// Shell words: how hvdrun reads a flag that holds a whole command line (--mpi-args "...") and how
// it prints one (--dry-run), with a POSIX shell's quoting rules and nothing else: no variables,
// globs, substitutions or operators.
#ifndef HVDRUN_COMMON_SHELL_WORDS_H_
#define HVDRUN_COMMON_SHELL_WORDS_H_

#include <string>
#include <string_view>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun {

// Splits `text` into words: blanks (space, tab, newline) separate them; '...' keeps every byte up
// to the next ' as it is; "..." does too, except that \ before $ ` " \ or a newline escapes it;
// outside quotes \ keeps the next byte as it is (a \ before a newline joins lines). Quoting may
// make a word of an empty string (''). Fails on an unterminated quote or a trailing lone \,
// saying which.
StatusOr<std::vector<std::string>> SplitShellWords(std::string_view text);

// `word` as a POSIX shell reads it back as this one word: unchanged when it holds only letters,
// digits and `_-+=/.,:@%`, otherwise in single quotes (a ' inside written '\'').
std::string ShellQuote(std::string_view word);

// The words quoted by ShellQuote, joined by spaces: a command line to copy into a shell.
std::string ShellJoin(const std::vector<std::string>& words);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_SHELL_WORDS_H_
