#include "lab/json_fields.h"

#include <cmath>
#include <cstdio>

#include "common/error_text.h"

namespace hvdrun::lab {
namespace {

const nlohmann::json& EmptyList() {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  return kEmpty;
}

const nlohmann::json& EmptyObject() {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  return kEmpty;
}

std::string LimitText(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

}  // namespace

std::optional<int64_t> JsonWholeNumber(const nlohmann::json& value, int64_t min, int64_t max) {
  if (value.is_number_integer()) {
    // Unsigned values above what int64_t holds are out of every range.
    if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return std::nullopt;
    }
    const int64_t number = value.get<int64_t>();
    if (number < min || number > max) return std::nullopt;
    return number;
  }
  if (!value.is_number_float()) return std::nullopt;
  const double number = value.get<double>();
  // Compared as doubles first, so that the conversion below is always defined (2^63 is not).
  if (!std::isfinite(number) || std::fabs(number) >= 9.0e18 || number != std::floor(number) ||
      number < static_cast<double>(min) || number > static_cast<double>(max)) {
    return std::nullopt;
  }
  return static_cast<int64_t>(number);
}

std::string JsonValueText(const nlohmann::json& value) {
  if (value.is_string()) {
    // Appended, not "'" + ...: GCC 12's -Wrestrict misreads that chain at -O3.
    std::string text = PrintableText(value.get<std::string>());
    text.insert(0, 1, '\'');
    return text.append("'");
  }
  if (value.is_object()) return "an object";
  if (value.is_array()) return "a list";
  return PrintableText(value.dump());
}

JsonFields::JsonFields(const nlohmann::json& json, std::string file)
    : JsonFields(json, std::move(file), "", std::make_shared<Status>(Status::Ok())) {
  if (!json.is_object() && !json.is_null()) {
    Fail("", "the file holds " + JsonValueText(json) + ", not an object");
  }
}

JsonFields::JsonFields(const nlohmann::json& json, std::string file, std::string path,
                       std::shared_ptr<Status> error)
    : json_(json.is_object() ? json : EmptyObject()),
      file_(std::move(file)),
      path_(std::move(path)),
      error_(std::move(error)) {}

std::string JsonFields::Name(const char* key) const { return path_ + "\"" + key + "\""; }

void JsonFields::Fail(const std::string& what, const std::string& problem) {
  if (!error_->ok()) return;
  *error_ = Status::Error(file_ + ": " + (what.empty() ? "" : what + " ") + problem);
}

const nlohmann::json* JsonFields::Find(const char* key) const {
  auto it = json_.find(key);
  if (it == json_.end() || it->is_null()) return nullptr;
  return &*it;
}

int64_t JsonFields::Whole(const char* key, int64_t min, int64_t max, int64_t fallback) {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return fallback;
  std::optional<int64_t> number = JsonWholeNumber(*value, min, max);
  if (!number) {
    Fail(Name(key), "is " + JsonValueText(*value) + "; expected a whole number from " + std::to_string(min) +
                        " to " + std::to_string(max));
    return fallback;
  }
  return *number;
}

double JsonFields::Positive(const char* key, double max, double fallback) {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return fallback;
  if (!value->is_number() || !(value->get<double>() > 0 && value->get<double>() <= max)) {
    Fail(Name(key),
         "is " + JsonValueText(*value) + "; expected a number above 0 and at most " + LimitText(max));
    return fallback;
  }
  return value->get<double>();
}

std::string JsonFields::Text(const char* key, const std::string& fallback) {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return fallback;
  if (!value->is_string()) {
    Fail(Name(key), "is " + JsonValueText(*value) + "; expected a string");
    return fallback;
  }
  return value->get<std::string>();
}

std::vector<std::string> JsonFields::TextList(const char* key) {
  std::vector<std::string> texts;
  for (const nlohmann::json& entry : List(key)) {
    if (!entry.is_string()) {
      Fail(Name(key), "holds " + JsonValueText(entry) + "; expected a list of strings");
      return {};
    }
    texts.push_back(entry.get<std::string>());
  }
  return texts;
}

const nlohmann::json& JsonFields::List(const char* key) {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return EmptyList();
  if (!value->is_array()) {
    Fail(Name(key), "is " + JsonValueText(*value) + "; expected a list");
    return EmptyList();
  }
  return *value;
}

JsonFields JsonFields::Object(const char* key) {
  const nlohmann::json* value = Find(key);
  if (value != nullptr && !value->is_object()) {
    Fail(Name(key), "is " + JsonValueText(*value) + "; expected an object");
  }
  return JsonFields(value != nullptr ? *value : EmptyObject(), file_, Name(key) + ".", error_);
}

JsonFields JsonFields::Element(const char* key, const nlohmann::json& element, size_t index) {
  const std::string name = Name(key) + "[" + std::to_string(index) + "]";
  if (!element.is_object()) Fail(name, "is " + JsonValueText(element) + "; expected an object");
  return JsonFields(element, file_, name + ".", error_);
}

}  // namespace hvdrun::lab
