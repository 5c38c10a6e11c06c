#include "common/timeline/timeline_merge.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "common/atomic_file.h"
#include "common/process/file_descriptor.h"
#include "common/timeline/timeline_format.h"

namespace hvdrun {
namespace {

namespace format = timeline_format;
using nlohmann::json;

constexpr size_t kPieceBytes = size_t{1} << 20;
// Longer than any event a rank writes by far; a longer one means the file is damaged.
constexpr size_t kMaxEventBytes = size_t{1} << 20;

// The top-level elements of a Chrome-trace JSON array, one at a time, read from a file in pieces.
// Only their extent is found here (braces outside strings); the caller parses each one.
class TraceEventReader {
 public:
  enum class Result { kEvent, kEnd, kStop };

  explicit TraceEventReader(int fd) : fd_(fd) {}

  // kEvent: *event holds the next element's text. kEnd: the closing bracket came. kStop: the file
  // holds nothing more that can be read; note() says why.
  Result Next(std::string* event) {
    if (!opened_) {
      SkipSeparators(/*commas=*/false);
      const int first = Get();
      if (first != '[') {
        return Stop(first < 0 && offset_ == 0 ? "is empty" : "is not a Chrome-trace JSON array");
      }
      opened_ = true;
    }
    SkipSeparators(/*commas=*/true);
    const uint64_t start = offset_;
    int c = Get();
    if (c == ']') return Result::kEnd;
    if (c < 0) return Stop("ends before its closing bracket");
    if (c != '{') return Stop("holds a byte that starts no event at byte " + std::to_string(start));
    event->assign(1, '{');
    int depth = 1;
    bool in_string = false;
    bool escaped = false;
    while (depth > 0) {
      c = Get();
      if (c < 0) return Stop("ends inside an event at byte " + std::to_string(start));
      if (event->size() >= kMaxEventBytes) {
        return Stop("holds an event over 1 MiB at byte " + std::to_string(start));
      }
      event->push_back(static_cast<char>(c));
      if (in_string) {
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        --depth;
      }
    }
    return Result::kEvent;
  }

  const std::string& note() const { return note_; }
  uint64_t offset() const { return offset_; }

 private:
  Result Stop(std::string note) {
    if (note_.empty()) note_ = std::move(note);
    return Result::kStop;
  }

  // The next byte, or -1 at the end of the file or on a read error (then note_ says so).
  int Get() {
    if (position_ == piece_.size() && !Fill()) return -1;
    ++offset_;
    return static_cast<unsigned char>(piece_[position_++]);
  }

  int Peek() {
    if (position_ == piece_.size() && !Fill()) return -1;
    return static_cast<unsigned char>(piece_[position_]);
  }

  bool Fill() {
    piece_.resize(kPieceBytes);
    position_ = 0;
    ssize_t got = 0;
    do {
      got = ::read(fd_, piece_.data(), piece_.size());
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
      Stop(std::string("cannot be read at byte ") + std::to_string(offset_) + ": " + std::strerror(errno));
    }
    piece_.resize(got > 0 ? static_cast<size_t>(got) : 0);
    return got > 0;
  }

  void SkipSeparators(bool commas) {
    for (int c = Peek(); c == ' ' || c == '\n' || c == '\r' || c == '\t' || (commas && c == ',');
         c = Peek()) {
      Get();
    }
  }

  int fd_;
  std::string piece_;
  size_t position_ = 0;
  uint64_t offset_ = 0;
  bool opened_ = false;
  std::string note_;
};

std::string_view StringField(const json& object, const char* key) {
  const auto field = object.find(key);
  if (field == object.end() || !field->is_string()) return {};
  return field->get_ref<const std::string&>();
}

std::optional<int64_t> IntegerArg(const json& event, const char* key) {
  const auto args = event.find("args");
  if (args == event.end() || !args->is_object()) return std::nullopt;
  const auto value = args->find(key);
  if (value == args->end() || !value->is_number_integer()) return std::nullopt;
  return value->get<int64_t>();
}

// The merged file's text, written in pieces.
class MergedTraceWriter {
 public:
  explicit MergedTraceWriter(AtomicFileWriter file) : file_(std::move(file)) {}

  Status Add(const json& event) {
    pending_.append(events_ == 0 ? "[\n" : ",\n").append(event.dump());
    ++events_;
    if (pending_.size() < kPieceBytes) return Status::Ok();
    Status status = file_.Write(pending_);
    pending_.clear();
    return status;
  }

  Status Finish() {
    pending_.append(events_ == 0 ? "[\n]\n" : "\n]\n");
    if (Status status = file_.Write(pending_); !status.ok()) return status;
    return file_.Commit();
  }

 private:
  AtomicFileWriter file_;
  std::string pending_;
  uint64_t events_ = 0;
};

json Metadata(const char* name, int rank, const char* key, json value) {
  return json{{"name", name}, {"ph", "M"}, {"pid", rank}, {"args", {{key, std::move(value)}}}};
}

// Copies rank `rank`'s events from `summary->path` to `out`, filling in `summary`.
Status MergeRank(int rank, RankTimelineSummary* summary, MergedTraceWriter* out) {
  bool named = false;
  json last_ts = 0;
  UniqueFd fd(::open(summary->path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    summary->note = "cannot read timeline '" + summary->path + "': " + std::strerror(errno);
  } else {
    TraceEventReader reader(fd.get());
    std::string text;
    TraceEventReader::Result result = TraceEventReader::Result::kEvent;
    while ((result = reader.Next(&text)) == TraceEventReader::Result::kEvent) {
      json event = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (event.is_discarded() || !event.is_object()) {
        summary->note = "timeline '" + summary->path +
                        "' holds an event that is not valid JSON, ending at byte " +
                        std::to_string(reader.offset());
        break;
      }
      event["pid"] = rank;
      const std::string_view name = StringField(event, "name");
      const bool metadata = StringField(event, "ph") == "M";
      if (metadata && name == format::kProcessName) named = true;
      if (metadata && name == format::kClockMetadata) {
        summary->zero_unix_micros = IntegerArg(event, format::kZeroUnixMicrosArg);
      }
      if (name == format::kEventsDropped) {
        summary->dropped_events =
            static_cast<uint64_t>(IntegerArg(event, format::kDroppedEventsArg).value_or(0));
      }
      if (const auto ts = event.find("ts"); ts != event.end() && ts->is_number()) last_ts = *ts;
      if (Status status = out->Add(event); !status.ok()) return status;
      ++summary->events;
    }
    summary->complete = result == TraceEventReader::Result::kEnd;
    if (result == TraceEventReader::Result::kStop) {
      summary->note = "timeline '" + summary->path + "' " + reader.note();
    }
  }
  if (!named) {
    if (Status status =
            out->Add(Metadata(format::kProcessName, rank, "name", "rank " + std::to_string(rank)));
        !status.ok()) {
      return status;
    }
    if (Status status = out->Add(Metadata(format::kProcessSortIndex, rank, "sort_index", rank));
        !status.ok()) {
      return status;
    }
  }
  if (summary->complete) return Status::Ok();
  return out->Add(json{{"name", format::kTruncated},
                       {"ph", "i"},
                       {"s", "p"},
                       {"pid", rank},
                       {"tid", 0},
                       {"ts", last_ts},
                       {"args", {{"note", summary->note}, {"events_kept", summary->events}}}});
}

}  // namespace

StatusOr<TimelineMergeSummary> MergeTimelines(const std::vector<std::string>& rank_files,
                                              const std::string& out_path) {
  StatusOr<AtomicFileWriter> file = AtomicFileWriter::Open(out_path);
  if (!file.ok()) return file.status();
  MergedTraceWriter out(std::move(file).value());
  TimelineMergeSummary summary;
  summary.ranks.resize(rank_files.size());
  std::optional<int64_t> earliest_zero;
  std::optional<int64_t> latest_zero;
  for (size_t rank = 0; rank < rank_files.size(); ++rank) {
    RankTimelineSummary& rank_summary = summary.ranks[rank];
    rank_summary.path = rank_files[rank];
    if (Status status = MergeRank(static_cast<int>(rank), &rank_summary, &out); !status.ok()) return status;
    if (const std::optional<int64_t> zero = rank_summary.zero_unix_micros; zero) {
      earliest_zero = std::min(earliest_zero.value_or(*zero), *zero);
      latest_zero = std::max(latest_zero.value_or(*zero), *zero);
    }
  }
  if (earliest_zero) summary.zero_spread_micros = *latest_zero - *earliest_zero;
  if (Status status = out.Finish(); !status.ok()) return status;
  return summary;
}

}  // namespace hvdrun
