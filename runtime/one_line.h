// OneLine: text that came from a library (dlerror, an exception's what(), MPI_Error_string, NCCL's
// last error) made fit for a Status, whose message is one line: each line break becomes a space,
// and the spaces it leaves at the end are dropped.
//
// Inline, in a header: libhvdrun.so and each backend module (runtime/CMakeLists.txt) compile a hidden
// copy of their own, so that no module needs a symbol that libhvdrun.so does not export.
#ifndef HVDRUN_RUNTIME_ONE_LINE_H_
#define HVDRUN_RUNTIME_ONE_LINE_H_

#include <string>
#include <string_view>

namespace hvdrun {

inline std::string OneLine(std::string_view text) {
  std::string line(text);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_ONE_LINE_H_
