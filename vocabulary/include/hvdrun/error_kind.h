// ErrorKind: what a failed Status asks of the program that got it, beyond its one line.
//
// kRecoverable: an elastic job's collective failed because its ranks changed (a peer gone, a
// connection reset, a newer round begun); the program restores its last commit, re-initializes
// (destroys its Runtime and creates one again) and goes on (hvdrun.torch raises
// HorovodInternalError). kRemoved: re-initialization found that this worker has no place in the
// job's new round; the program exits 0 after printing the message. kOther: every other error.
//
// The kind travels as a marker at the end of the message (" [elastic: recoverable]"), so that a
// caller that adds context by prefixing (status.h's rule) keeps it, and the one line still says it.
// Header-only; thread-safe (pure functions).
#ifndef HVDRUN_ERROR_KIND_H_
#define HVDRUN_ERROR_KIND_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "hvdrun/status.h"

namespace hvdrun {

enum class ErrorKind : uint8_t {
  kOther = 0,
  kRecoverable = 1,
  kRemoved = 2,
};

namespace error_kind_internal {

inline constexpr std::string_view kRecoverableMarker = " [elastic: recoverable]";
inline constexpr std::string_view kRemovedMarker = " [elastic: removed]";

inline bool EndsWith(const std::string& text, std::string_view tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace error_kind_internal

// The kind of `status`; kOther for OK too.
inline ErrorKind KindOf(const Status& status) {
  if (status.ok()) return ErrorKind::kOther;
  if (error_kind_internal::EndsWith(status.message(), error_kind_internal::kRecoverableMarker)) {
    return ErrorKind::kRecoverable;
  }
  if (error_kind_internal::EndsWith(status.message(), error_kind_internal::kRemovedMarker)) {
    return ErrorKind::kRemoved;
  }
  return ErrorKind::kOther;
}

// An error of `kind` saying `message`.
inline Status ErrorOfKind(ErrorKind kind, std::string message) {
  if (kind == ErrorKind::kRecoverable) message += error_kind_internal::kRecoverableMarker;
  if (kind == ErrorKind::kRemoved) message += error_kind_internal::kRemovedMarker;
  return Status::Error(std::move(message));
}

// `status` as a recoverable error: OK and errors of a kind stay as they are.
inline Status AsRecoverable(Status status) {
  if (status.ok() || KindOf(status) != ErrorKind::kOther) return status;
  return ErrorOfKind(ErrorKind::kRecoverable, status.message());
}

}  // namespace hvdrun

#endif  // HVDRUN_ERROR_KIND_H_
