// Status and StatusOr<T>: the value every hvdrun module returns across its boundary when an
// operation can fail for a reason the user must read.
//
// A Status is either OK or carries one human-readable line that already says what failed and
// where (flag, host, rank, file:line). Callers add context by prefixing, never by wrapping in a
// second sentence. Both types are cheap to move and not thread-safe.
#ifndef HVDRUN_STATUS_H_
#define HVDRUN_STATUS_H_

#include <cstdio>
#include <cstdlib>
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

namespace status_internal {

// Reading the value of a StatusOr that holds an error is a bug in the caller. It stops the program
// in every build type (not only where assert is compiled in), saying what was read and the error
// the caller did not check, so that the bug is seen where it is, not as a crash later.
[[noreturn]] inline void DieReadingError(const Status& status, const char* what) {
  std::fprintf(stderr, "hvdrun: StatusOr::%s read the value of an error: %s\n", what,
               status.message().c_str());
  std::fflush(stderr);
  std::abort();
}

[[noreturn]] inline void DieOnOkStatus() {
  std::fputs("hvdrun: StatusOr constructed from an OK Status: it needs a value or an error\n", stderr);
  std::fflush(stderr);
  std::abort();
}

}  // namespace status_internal

// A value of T, or the Status of the error that prevented it; the accessors of absl::StatusOr and
// std::expected: ok(), status(), value(), operator* and operator-> (each for every value category),
// value_or(). Reading the value (value(), *, ->) of an error prints the error's message to stderr
// and aborts, in every build type: check ok() first. Constructing one from an OK Status aborts too.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (status_.ok()) status_internal::DieOnOkStatus();
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  const T& value() const& { return Checked("value()"); }
  T& value() & { return Checked("value()"); }
  const T&& value() const&& { return std::move(Checked("value()")); }
  T&& value() && { return std::move(Checked("value()")); }

  const T& operator*() const& { return Checked("operator*"); }
  T& operator*() & { return Checked("operator*"); }
  const T&& operator*() const&& { return std::move(Checked("operator*")); }
  T&& operator*() && { return std::move(Checked("operator*")); }

  const T* operator->() const { return &Checked("operator->"); }
  T* operator->() { return &Checked("operator->"); }

  // The value, or `fallback` (converted to T) when this holds an error.
  template <typename U>
  T value_or(U&& fallback) const& {
    return ok() ? *value_ : static_cast<T>(std::forward<U>(fallback));
  }
  template <typename U>
  T value_or(U&& fallback) && {
    return ok() ? std::move(*value_) : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  const T& Checked(const char* what) const {
    if (!value_) status_internal::DieReadingError(status_, what);
    return *value_;
  }
  T& Checked(const char* what) {
    if (!value_) status_internal::DieReadingError(status_, what);
    return *value_;
  }

  Status status_;
  std::optional<T> value_;
};

}  // namespace hvdrun

#endif  // HVDRUN_STATUS_H_
