#include "launcher/mpirun/mpirun_output_parser.h"

#include <limits>

#include "common/whole_number.h"

namespace hvdrun {
namespace {

// Digits in a tag's JOB or RANK: enough for any 32-bit number.
constexpr size_t kMaxDigits = 10;

}  // namespace

MpirunOutputParser::Match MpirunOutputParser::MatchTag(size_t pos, size_t* length, int* rank,
                                                       protocol::OutputStream* stream) {
  const std::string_view whole = buffer_;
  const std::string_view text = whole.substr(pos);
  size_t i = 0;
  auto literal = [&](std::string_view expected) {
    for (char c : expected) {
      if (i == text.size()) return Match::kMaybe;
      if (text[i] != c) return Match::kNo;
      ++i;
    }
    return Match::kTag;
  };
  auto number = [&](std::string_view* digits) {
    size_t start = i;
    while (i < text.size() && i - start < kMaxDigits && text[i] >= '0' && text[i] <= '9') ++i;
    if (i == text.size()) return Match::kMaybe;
    if (i == start) return Match::kNo;
    *digits = text.substr(start, i - start);
    return Match::kTag;
  };
  std::string_view job;
  std::string_view rank_digits;
  Match match;
  if ((match = literal("[")) != Match::kTag || (match = number(&job)) != Match::kTag ||
      (match = literal(",")) != Match::kTag || (match = number(&rank_digits)) != Match::kTag ||
      (match = literal("]<std")) != Match::kTag) {
    return match;
  }
  if (i == text.size()) return Match::kMaybe;
  protocol::OutputStream tagged_stream = protocol::OutputStream::kStdout;
  if (text[i] == 'o') {
    ++i;
    match = literal("ut>:");
  } else if (text[i] == 'e') {
    tagged_stream = protocol::OutputStream::kStderr;
    ++i;
    match = literal("rr>:");
  } else {
    return Match::kNo;
  }
  if (match != Match::kTag) return match;
  if (!job_.empty() && job != job_) return Match::kNo;
  const ParsedWholeNumber tagged_rank = ParseWholeNumber(rank_digits, 0, std::numeric_limits<int>::max());
  if (!tagged_rank.ok()) return Match::kNo;
  if (job_.empty()) job_ = std::string(job);
  *length = i;
  *rank = static_cast<int>(tagged_rank.value);
  *stream = tagged_stream;
  return Match::kTag;
}

void MpirunOutputParser::Feed(std::string_view bytes, const Sink& sink) {
  buffer_.append(bytes);
  Process(false, sink);
}

void MpirunOutputParser::Finish(const Sink& sink) {
  Process(true, sink);
  if (state_ == State::kUntagged && !untagged_.empty()) EndUntaggedLine(sink);
  state_ = State::kLineStart;
}

void MpirunOutputParser::Process(bool at_end, const Sink& sink) {
  const std::string_view text(buffer_);
  size_t pos = 0;
  // Untagged text goes into untagged_, passed on in pieces of at most kMaxUntaggedLine bytes.
  auto add_untagged = [&](std::string_view piece) {
    untagged_.append(piece);
    while (untagged_.size() >= kMaxUntaggedLine) {
      const std::string_view pending = untagged_;
      sink.untagged(pending.substr(0, kMaxUntaggedLine));
      untagged_.erase(0, kMaxUntaggedLine);
    }
  };
  auto plain_text = [&](std::string_view piece) {
    if (piece.empty()) return;
    if (state_ == State::kTagged) {
      sink.tagged(rank_, stream_, piece);
    } else {
      add_untagged(piece);
    }
  };
  while (pos < text.size()) {
    size_t length = 0;
    int rank = 0;
    protocol::OutputStream stream = protocol::OutputStream::kStdout;
    if (state_ == State::kLineStart) {
      Match match = MatchTag(pos, &length, &rank, &stream);
      if (match == Match::kMaybe && !at_end) break;
      if (match == Match::kTag) {
        pos += length;
        state_ = State::kTagged;
        rank_ = rank;
        stream_ = stream;
      } else {
        state_ = State::kUntagged;
      }
      continue;
    }
    size_t stop = text.find_first_of("\n[", pos);
    if (stop == std::string_view::npos) {
      plain_text(text.substr(pos));
      pos = text.size();
      break;
    }
    if (text[stop] == '\n') {
      if (state_ == State::kTagged) {
        sink.tagged(rank_, stream_, text.substr(pos, stop + 1 - pos));
      } else {
        add_untagged(text.substr(pos, stop - pos));
        EndUntaggedLine(sink);
      }
      pos = stop + 1;
      state_ = State::kLineStart;
      continue;
    }
    plain_text(text.substr(pos, stop - pos));
    pos = stop;
    Match match = MatchTag(pos, &length, &rank, &stream);
    if (match == Match::kMaybe && !at_end) break;
    if (match == Match::kTag) {
      // The piece before ended inside a line; the next piece starts here.
      if (state_ == State::kUntagged) EndUntaggedLine(sink);
      pos += length;
      state_ = State::kTagged;
      rank_ = rank;
      stream_ = stream;
    } else {
      plain_text(text.substr(pos, 1));
      ++pos;
    }
  }
  buffer_.erase(0, pos);
}

void MpirunOutputParser::EndUntaggedLine(const Sink& sink) {
  sink.untagged(untagged_);
  untagged_.clear();
}

}  // namespace hvdrun
