// EnvironmentReader: the variables hvdrun gives a process it starts (common/env_names.h), read
// through an injected lookup so that tests give their own values.
//
// Every error is one line that names the variable:
//   "NAME is not set: HINT"  and  "NAME is empty: HINT"   (HINT: the reader's, saying how the
//                                                          process must be started to have it)
//   "NAME='VALUE' is not a whole number from MIN to MAX"
// A variable whose value must never be shown (the job secret) is read with Required, whose errors
// hold no value. As thread-safe as its lookup.
#ifndef HVDRUN_COMMON_ENVIRONMENT_READER_H_
#define HVDRUN_COMMON_ENVIRONMENT_READER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "hvdrun/status.h"

namespace hvdrun {

// Looks a variable up: its value, or nullptr when unset (std::getenv in production).
using EnvironmentLookup = std::function<const char*(const char*)>;

// A lookup in `variables`, which must outlive it: an environment that a test writes as a map.
EnvironmentLookup LookupIn(const std::map<std::string, std::string>& variables);

class EnvironmentReader {
 public:
  EnvironmentReader(EnvironmentLookup lookup, std::string missing_hint)
      : lookup_(std::move(lookup)), missing_hint_(std::move(missing_hint)) {}

  // The value, or nullptr when unset: for variables that may be absent.
  const char* Find(const char* name) const { return lookup_(name); }

  // The value of a variable that must be set and not empty.
  StatusOr<std::string> Required(const char* name) const;

  // A required variable's value as a whole number in [min, max] (common/whole_number.h).
  StatusOr<int64_t> RequiredWholeNumber(const char* name, int64_t min, int64_t max) const;

 private:
  EnvironmentLookup lookup_;
  std::string missing_hint_;
};

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_ENVIRONMENT_READER_H_
