#include "common/environment_reader.h"

#include "common/whole_number.h"

namespace hvdrun {

EnvironmentLookup LookupIn(const std::map<std::string, std::string>& variables) {
  return [&variables](const char* name) -> const char* {
    auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  };
}

StatusOr<std::string> EnvironmentReader::Required(const char* name) const {
  const char* value = lookup_(name);
  if (value == nullptr) return Status::Error(std::string(name) + " is not set: " + missing_hint_);
  if (*value == '\0') return Status::Error(std::string(name) + " is empty: " + missing_hint_);
  return std::string(value);
}

StatusOr<int64_t> EnvironmentReader::RequiredWholeNumber(const char* name, int64_t min, int64_t max) const {
  StatusOr<std::string> text = Required(name);
  if (!text.ok()) return text.status();
  const ParsedWholeNumber number = ParseWholeNumber(text.value(), min, max);
  if (!number.ok()) {
    return Status::Error(std::string(name) + "='" + text.value() + "' is not a whole number from " +
                         std::to_string(min) + " to " + std::to_string(max));
  }
  return number.value;
}

}  // namespace hvdrun
