// MpirunOutputParser: reads one of mpirun's output streams under `--tag-output`.
//
// Open MPI 4.1 forwards each piece it reads from a rank's stdout or stderr with a tag in front,
// `[JOB,RANK]<stdout>:` or `[JOB,RANK]<stderr>:` (JOB is the job's number, the same for every
// rank), and again after each newline inside the piece. A piece that ends inside a line is
// followed directly by the next piece's tag, of any rank, so a tag can also begin in the middle of
// a line. mpirun's own messages carry no tag.
//
// The parser gives each rank's bytes in order (`tagged`, which the caller cuts into lines per rank
// and stream), and mpirun's own lines (`untagged`, without the newline). Input arrives in
// arbitrary pieces; a tag or an untagged line split across them is reassembled. A rank's bytes
// that spell a tag of this job inside a line cannot be told apart from one (a limit of mpirun's
// format). Text that is not a well-formed tag (`[1,x]<stdout>:`, a rank above 2^31 - 1) is text.
// An untagged line longer than kMaxUntaggedLine bytes is passed on in pieces of that size. Not
// thread-safe.
#ifndef HVDRUN_LAUNCHER_MPIRUN_MPIRUN_OUTPUT_PARSER_H_
#define HVDRUN_LAUNCHER_MPIRUN_MPIRUN_OUTPUT_PARSER_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "common/protocol/agent_protocol.h"

namespace hvdrun {

class MpirunOutputParser {
 public:
  static constexpr size_t kMaxUntaggedLine = size_t{64} * 1024;

  struct Sink {
    // Bytes a rank wrote to `stream`, newlines included, in order.
    std::function<void(int rank, protocol::OutputStream stream, std::string_view bytes)> tagged;
    // One of mpirun's own lines, without its newline.
    std::function<void(std::string_view line)> untagged;
  };

  void Feed(std::string_view bytes, const Sink& sink);
  // At the end of the stream: what is left, a last line without a newline included.
  void Finish(const Sink& sink);

 private:
  enum class State { kLineStart, kTagged, kUntagged };
  enum class Match { kTag, kMaybe, kNo };

  // Whether buffer_ holds a tag at `pos` (kMaybe: it might, once more bytes arrive); on kTag sets
  // *length and the tag's rank and stream.
  Match MatchTag(size_t pos, size_t* length, int* rank, protocol::OutputStream* stream);
  // Consumes what can be decided now; at the end of the stream, everything.
  void Process(bool at_end, const Sink& sink);
  void EndUntaggedLine(const Sink& sink);

  std::string buffer_;
  State state_ = State::kLineStart;
  int rank_ = 0;
  protocol::OutputStream stream_ = protocol::OutputStream::kStdout;
  std::string job_;  // the JOB of the first tag; tags of another job are text
  std::string untagged_;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_MPIRUN_MPIRUN_OUTPUT_PARSER_H_
