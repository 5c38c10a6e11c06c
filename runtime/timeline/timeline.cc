#include "runtime/timeline/timeline.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <utility>

#include "common/shortest_number.h"
#include "common/timeline/timeline_format.h"

namespace hvdrun {
namespace {

using Clock = std::chrono::steady_clock;
namespace format = timeline_format;

constexpr std::string_view kClosing = "\n]\n";
// Room for the TIMELINE_EVENTS_DROPPED event (about 130 bytes with every number at its widest)
// and the closing bracket.
constexpr uint64_t kTailRoom = 256;

void AppendNumber(std::string* out, int64_t value) {
  char digits[24];
  const std::to_chars_result result = std::to_chars(digits, digits + sizeof(digits), value);
  out->append(digits, result.ptr);
}

void AppendNumber(std::string* out, uint64_t value) {
  char digits[24];
  const std::to_chars_result result = std::to_chars(digits, digits + sizeof(digits), value);
  out->append(digits, result.ptr);
}

// JSON has no infinity or NaN.
void AppendNumber(std::string* out, double value) {
  if (!std::isfinite(value)) {
    out->append("null");
    return;
  }
  out->append(ShortestNumberText(value));
}

// Microseconds with up to three decimals: -1500 ns -> "-1.5", 2000 ns -> "2".
void AppendMicros(std::string* out, int64_t nanos) {
  if (nanos < 0) out->push_back('-');
  const uint64_t magnitude =
      nanos < 0 ? uint64_t{0} - static_cast<uint64_t>(nanos) : static_cast<uint64_t>(nanos);
  AppendNumber(out, magnitude / 1000);
  uint64_t fraction = magnitude % 1000;
  if (fraction == 0) return;
  out->push_back('.');
  for (uint64_t unit = 100; unit > 0 && fraction > 0; unit /= 10) {
    out->push_back(static_cast<char>('0' + fraction / unit));
    fraction %= unit;
  }
}

// `text` as a JSON string, cut at `max_bytes` (then ending in "..."). Bytes outside ASCII become
// '?', so that the file is valid UTF-8 whatever a tensor's name holds.
void AppendJsonString(std::string* out, std::string_view text, size_t max_bytes) {
  const bool cut = text.size() > max_bytes;
  if (cut) text = text.substr(0, max_bytes);
  out->push_back('"');
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (byte < 0x20) {
      constexpr std::string_view kHex = "0123456789abcdef";
      out->append("\\u00");
      out->push_back(kHex[byte >> 4]);
      out->push_back(kHex[byte & 0xf]);
    } else {
      out->push_back(byte < 0x80 ? c : '?');
    }
  }
  if (cut) out->append("...");
  out->push_back('"');
}

// A metadata event: ,\n{"name":NAME,"ph":"M","pid":R[,"tid":T],"args":{KEY:
void AppendMetadataHead(std::string* out, std::string_view name, int rank, int64_t tid,
                        std::string_view key) {
  out->append(",\n{\"name\":\"").append(name).append("\",\"ph\":\"M\",\"pid\":");
  AppendNumber(out, int64_t{rank});
  if (tid >= 0) {
    out->append(",\"tid\":");
    AppendNumber(out, tid);
  }
  out->append(",\"args\":{\"").append(key).append("\":");
}

void AppendThreadMetadata(std::string* out, int rank, size_t tid, std::string_view thread_name) {
  AppendMetadataHead(out, format::kThreadName, rank, static_cast<int64_t>(tid), "name");
  AppendJsonString(out, thread_name, thread_name.size());
  out->append("}}");
  AppendMetadataHead(out, format::kThreadSortIndex, rank, static_cast<int64_t>(tid), "sort_index");
  AppendNumber(out, static_cast<uint64_t>(tid));
  out->append("}}");
}

std::string Header(const TimelineOptions& options, int64_t zero_unix_micros) {
  std::string out;
  std::string process_name = "rank " + std::to_string(options.rank);
  if (!options.host.empty()) process_name += " (" + options.host + ")";
  AppendMetadataHead(&out, format::kProcessName, options.rank, -1, "name");
  AppendJsonString(&out, process_name, 256);
  out.append("}}");
  AppendMetadataHead(&out, format::kProcessSortIndex, options.rank, -1, "sort_index");
  AppendNumber(&out, int64_t{options.rank});
  out.append("}}");
  AppendMetadataHead(&out, format::kClockMetadata, options.rank, -1, format::kZeroUnixMicrosArg);
  AppendNumber(&out, zero_unix_micros);
  out.append(",\"rank\":");
  AppendNumber(&out, int64_t{options.rank});
  out.append(",\"host\":");
  AppendJsonString(&out, options.host, 256);
  out.append("}}");
  AppendThreadMetadata(&out, options.rank, 0, "cycle");
  // The first event follows "[" directly: replace its leading ",".
  out[0] = '[';
  return out;
}

// The instant event that ends a file once events were dropped.
std::string DroppedNote(int rank, int64_t ts_nanos, uint64_t dropped, uint64_t byte_limit) {
  std::string out = ",\n{\"name\":\"";
  out.append(format::kEventsDropped).append("\",\"ph\":\"i\",\"s\":\"p\",\"pid\":");
  AppendNumber(&out, int64_t{rank});
  out.append(",\"tid\":0,\"ts\":");
  AppendMicros(&out, ts_nanos);
  out.append(",\"args\":{\"").append(format::kDroppedEventsArg).append("\":");
  AppendNumber(&out, dropped);
  out.append(",\"").append(format::kByteLimitArg).append("\":");
  AppendNumber(&out, byte_limit);
  out.append("}}");
  return out;
}

}  // namespace

std::string TimelineBackendActivity(std::string_view backend, std::string_view operation) {
  std::string name(backend);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; });
  return name.append("_").append(operation);
}

Timeline::Timeline(TimelineOptions options, UniqueFd fd, Clock::time_point zero)
    : options_(std::move(options)), zero_(zero), fd_(std::move(fd)) {}

StatusOr<std::unique_ptr<Timeline>> Timeline::Open(TimelineOptions options) {
  if (options.byte_limit < kMinByteLimit) {
    return Status::Error("timeline byte limit " + std::to_string(options.byte_limit) +
                         " is below the minimum " + std::to_string(kMinByteLimit));
  }
  if (options.rank < 0) {
    return Status::Error("timeline rank " + std::to_string(options.rank) + " is negative");
  }
  if (options.flush_interval.count() <= 0) return Status::Error("timeline flush interval must be positive");
  const Clock::time_point now = Clock::now();
  const Clock::time_point zero = options.zero == Clock::time_point{} ? now : options.zero;
  const auto zero_on_wall_clock = std::chrono::system_clock::now() - (now - zero);
  const int64_t zero_unix_micros =
      std::chrono::duration_cast<std::chrono::microseconds>(zero_on_wall_clock.time_since_epoch()).count();

  UniqueFd fd(::open(options.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    return Status::Error("cannot open timeline '" + options.path + "': " + std::strerror(errno));
  }
  std::unique_ptr<Timeline> timeline(new Timeline(std::move(options), std::move(fd), zero));
  std::string header = Header(timeline->options_, zero_unix_micros);
  timeline->accepted_bytes_ = header.size();
  timeline->events_end_ = static_cast<off_t>(header.size());
  header.append(kClosing);
  {
    std::lock_guard<std::mutex> lock(timeline->file_mutex_);
    if (Status status = timeline->WriteAt(0, header); !status.ok()) return status;
  }
  timeline->writer_ = std::thread(&Timeline::RunWriter, timeline.get());
  return timeline;
}

Timeline::~Timeline() { (void)Close(); }

int64_t Timeline::SinceZeroNanos(Clock::time_point time) const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time - zero_).count();
}

void Timeline::AppendEventHeadLocked(std::string_view name, char phase, size_t tid, int64_t ts_nanos) {
  buffer_.append(",\n{\"name\":");
  AppendJsonString(&buffer_, name, kMaxTensorNameBytes);
  buffer_.append(",\"ph\":\"").append(1, phase).append("\",\"pid\":");
  AppendNumber(&buffer_, int64_t{options_.rank});
  buffer_.append(",\"tid\":");
  AppendNumber(&buffer_, static_cast<uint64_t>(tid));
  buffer_.append(",\"ts\":");
  AppendMicros(&buffer_, ts_nanos);
}

size_t Timeline::TakeLaneLocked(Clock::time_point start, Clock::time_point end) {
  for (size_t lane = 0; lane < lane_ends_.size(); ++lane) {
    if (lane_ends_[lane] <= start) {
      lane_ends_[lane] = end;
      return lane;
    }
  }
  if (lane_ends_.size() < kMaxLanes) {
    lane_ends_.push_back(end);
    const size_t lane = lane_ends_.size() - 1;
    AppendThreadMetadata(&buffer_, options_.rank, lane + 1, "responses " + std::to_string(lane + 1));
    return lane;
  }
  const auto earliest = std::min_element(lane_ends_.begin(), lane_ends_.end());
  *earliest = std::max(*earliest, end);
  return static_cast<size_t>(earliest - lane_ends_.begin());
}

void Timeline::AcceptLocked(size_t mark, uint64_t events, int64_t ts_nanos) {
  const uint64_t added = buffer_.size() - mark;
  if (dropped_events_ == 0 && accepted_bytes_ + added + kTailRoom <= options_.byte_limit) {
    accepted_bytes_ += added;
    if (buffer_.size() >= options_.flush_bytes) wake_writer_.notify_one();
    return;
  }
  buffer_.resize(mark);
  if (dropped_events_ == 0) first_drop_nanos_ = ts_nanos;
  dropped_events_ += events;
}

void Timeline::Record(const TimelineResponse& response) {
  if (response.activities.empty()) return;
  Clock::time_point start = response.activities.front().start;
  Clock::time_point end = response.activities.front().end;
  for (const TimelineActivity& activity : response.activities) {
    start = std::min(start, activity.start);
    end = std::max(end, activity.end);
  }
  const int64_t start_nanos = SinceZeroNanos(start);

  std::lock_guard<std::mutex> lock(buffer_mutex_);
  if (closing_) return;
  const uint64_t events = 1 + response.activities.size();
  if (dropped_events_ > 0) {
    dropped_events_ += events;
    return;
  }
  // Once one is dropped, every later one is: the lanes need not be restored then.
  const size_t mark = buffer_.size();
  const size_t tid = TakeLaneLocked(start, end) + 1;

  std::string args = ",\"args\":{\"bytes\":";
  AppendNumber(&args, response.bytes);
  args.append(",\"tensors\":");
  AppendNumber(&args, response.tensor_count);

  AppendEventHeadLocked(response.operation, 'X', tid, start_nanos);
  buffer_.append(",\"dur\":");
  AppendMicros(&buffer_, SinceZeroNanos(end) - start_nanos);
  buffer_.append(args).append(",\"names\":[");
  const size_t names = std::min(response.tensor_names.size(), kMaxTensorNames);
  for (size_t i = 0; i < names; ++i) {
    if (i > 0) buffer_.push_back(',');
    AppendJsonString(&buffer_, response.tensor_names[i], kMaxTensorNameBytes);
  }
  buffer_.append("]}}");
  args.append("}}");
  for (const TimelineActivity& activity : response.activities) {
    const int64_t activity_start = SinceZeroNanos(activity.start);
    AppendEventHeadLocked(activity.name, 'X', tid, activity_start);
    buffer_.append(",\"dur\":");
    AppendMicros(&buffer_, SinceZeroNanos(activity.end) - activity_start);
    buffer_.append(args);
  }
  AcceptLocked(mark, events, start_nanos);
}

void Timeline::MarkCycle(Clock::time_point start) {
  if (!options_.mark_cycles) return;
  const int64_t start_nanos = SinceZeroNanos(start);
  std::lock_guard<std::mutex> lock(buffer_mutex_);
  if (closing_) return;
  const size_t mark = buffer_.size();
  AppendEventHeadLocked(kTimelineCycleStart, 'i', 0, start_nanos);
  buffer_.append(",\"s\":\"t\"}");
  AcceptLocked(mark, 1, start_nanos);
}

void Timeline::Mark(const TimelineMark& mark, Clock::time_point at) {
  const int64_t at_nanos = SinceZeroNanos(at);
  std::lock_guard<std::mutex> lock(buffer_mutex_);
  if (closing_) return;
  const size_t mark_start = buffer_.size();
  AppendEventHeadLocked(mark.name, 'i', 0, at_nanos);
  buffer_.append(",\"s\":\"p\",\"args\":{");
  for (size_t i = 0; i < mark.args.size(); ++i) {
    if (i > 0) buffer_.push_back(',');
    AppendJsonString(&buffer_, mark.args[i].key, kMaxTensorNameBytes);
    buffer_.push_back(':');
    AppendNumber(&buffer_, mark.args[i].value);
  }
  buffer_.append("}}");
  AcceptLocked(mark_start, 1, at_nanos);
}

Status Timeline::WriteAt(off_t offset, std::string_view data) {
  while (!data.empty()) {
    const ssize_t written = ::pwrite(fd_.get(), data.data(), data.size(), offset);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      write_error_ = Status::Error("cannot write timeline '" + options_.path +
                                   "': " + std::strerror(written < 0 ? errno : ENOSPC));
      return write_error_;
    }
    data.remove_prefix(static_cast<size_t>(written));
    offset += written;
  }
  return Status::Ok();
}

Status Timeline::Flush() {
  std::lock_guard<std::mutex> file_lock(file_mutex_);
  if (!write_error_.ok() || closed_) {
    std::lock_guard<std::mutex> lock(buffer_mutex_);
    buffer_.clear();
    return write_error_;
  }
  uint64_t dropped = 0;
  int64_t first_drop_nanos = 0;
  {
    std::lock_guard<std::mutex> lock(buffer_mutex_);
    batch_.clear();
    batch_.swap(buffer_);
    dropped = dropped_events_;
    first_drop_nanos = first_drop_nanos_;
  }
  if (batch_.empty() && dropped == dropped_written_) return Status::Ok();
  const size_t events_size = batch_.size();
  if (dropped > 0) batch_.append(DroppedNote(options_.rank, first_drop_nanos, dropped, options_.byte_limit));
  batch_.append(kClosing);
  if (Status status = WriteAt(events_end_, batch_); !status.ok()) return status;
  events_end_ += static_cast<off_t>(events_size);
  dropped_written_ = dropped;
  return Status::Ok();
}

void Timeline::RunWriter() {
  std::unique_lock<std::mutex> lock(buffer_mutex_);
  while (!closing_) {
    wake_writer_.wait_for(lock, options_.flush_interval,
                          [this] { return closing_ || buffer_.size() >= options_.flush_bytes; });
    if (closing_) break;
    lock.unlock();
    // A write error is kept in write_error_ and returned by Flush and Close.
    (void)Flush();
    lock.lock();
  }
}

Status Timeline::Close() {
  {
    std::lock_guard<std::mutex> lock(buffer_mutex_);
    closing_ = true;
  }
  wake_writer_.notify_all();
  if (writer_.joinable()) writer_.join();
  Status status = Flush();
  std::lock_guard<std::mutex> file_lock(file_mutex_);
  if (closed_) return close_status_;
  closed_ = true;
  if (::close(fd_.Release()) != 0 && status.ok()) {
    status = Status::Error("cannot write timeline '" + options_.path + "': " + std::strerror(errno));
  }
  close_status_ = status;
  return close_status_;
}

uint64_t Timeline::dropped_events() const {
  std::lock_guard<std::mutex> lock(buffer_mutex_);
  return dropped_events_;
}

}  // namespace hvdrun
