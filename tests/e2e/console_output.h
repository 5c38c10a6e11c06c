// Reads hvdrun's console output: every line a rank writes appears on hvdrun's stdout or stderr as
// `[R]<stdout>:text` or `[R]<stderr>:text`; hvdrun's own messages are not tagged.
#ifndef HVDRUN_TESTS_E2E_CONSOLE_OUTPUT_H_
#define HVDRUN_TESTS_E2E_CONSOLE_OUTPUT_H_

#include <map>
#include <string>
#include <vector>

namespace hvdrun::e2e {

// The lines of `text`, newlines removed; a last line without a newline is a line too.
std::vector<std::string> SplitLines(const std::string& text);

// The text of the lines tagged `[R]<stream>:` (stream is "stdout" or "stderr"), by rank R, in order.
std::map<int, std::vector<std::string>> TaggedLines(const std::string& console, const std::string& stream);

// The lines that carry no rank tag: hvdrun's own messages.
std::vector<std::string> UntaggedLines(const std::string& console);

// Whether `text` holds `part` anywhere.
bool Contains(const std::string& text, const std::string& part);

// NAME=VALUE lines as a map; other lines are skipped.
std::map<std::string, std::string> ParseAssignments(const std::vector<std::string>& lines);

}  // namespace hvdrun::e2e

#endif  // HVDRUN_TESTS_E2E_CONSOLE_OUTPUT_H_
