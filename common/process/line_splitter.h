// LineSplitter: cuts one output stream of a rank into the lines hvdrun tags and forwards.
//
// Bytes arrive in arbitrary pieces. Each complete line is emitted without its '\n' and with
// newline=true. A line longer than `max_piece` bytes is emitted in pieces of max_piece bytes
// (newline=false on all but the last), so memory stays bounded whatever a rank writes. Finish()
// emits a last line that has no newline. Bytes are passed through unchanged: any byte values,
// NUL and invalid UTF-8 included. Not thread-safe.
#ifndef HVDRUN_COMMON_PROCESS_LINE_SPLITTER_H_
#define HVDRUN_COMMON_PROCESS_LINE_SPLITTER_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace hvdrun {

class LineSplitter {
 public:
  using EmitFn = std::function<void(std::string_view data, bool newline)>;

  explicit LineSplitter(size_t max_piece) : max_piece_(max_piece) {}

  void Feed(std::string_view bytes, const EmitFn& emit);
  void Finish(const EmitFn& emit);

 private:
  size_t max_piece_;
  std::string partial_;
};

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PROCESS_LINE_SPLITTER_H_
