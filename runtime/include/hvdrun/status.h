// Status and StatusOr<T>: the value every hvdrun module returns across its boundary when an
// operation can fail for a reason the user must read.
//
// A Status is either OK or carries one human-readable line that already says what failed and
// where (flag, host, rank, file:line). Callers add context by prefixing, never by wrapping in a
// second sentence. Both types are cheap to move and not thread-safe.
#ifndef HVDRUN_STATUS_H_
#define HVDRUN_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace hvdrun {

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !message_.has_value(); }
  // The error line; empty for OK.
  const std::string& message() const {
    static const std::string kEmpty;
    return message_ ? *message_ : kEmpty;
  }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
};

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!status_.ok() && "StatusOr needs a value or an error");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  const T& value() const& { return *value_; }
  T& value() & { return *value_; }
  T&& value() && { return std::move(*value_); }
  const T* operator->() const { return &*value_; }
  T* operator->() { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace hvdrun

#endif  // HVDRUN_STATUS_H_
