// JsonFields: the members of one object of a results file read back with their checks, as the report
// reads experiment.json, environment.json and the ranks' reports (lab/store/experiment_results.h).
//
// A member that is missing (or null) reads as the caller's fallback, as files written by an earlier
// hvdrun-lab may lack it; a member of the wrong type, or a number out of its range, is an error
// naming the file and the member ("DIR/experiment.json: \"figures\".\"step_time_scale\" is 0; expected
// a number above 0 and at most 1e+09"). The first error is kept (later reads return their fallback)
// and shared by the fields of the objects inside (Object), so that a caller reads every member it
// needs and checks status() once. Not thread-safe.
#ifndef HVDRUN_LAB_JSON_FIELDS_H_
#define HVDRUN_LAB_JSON_FIELDS_H_

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun::lab {

class JsonFields {
 public:
  // `json` (which must outlive this) is read as an object; `file` names it in errors. A `json` that
  // is not an object is an error unless it is null (a file that holds nothing to read).
  JsonFields(const nlohmann::json& json, std::string file);

  int64_t Whole(const char* key, int64_t min, int64_t max, int64_t fallback);
  // A number in (0, max].
  double Positive(const char* key, double max, double fallback);
  std::string Text(const char* key, const std::string& fallback);
  std::vector<std::string> TextList(const char* key);
  // The list member `key`; an empty list when it is missing (or not a list: an error).
  const nlohmann::json& List(const char* key);
  // The fields of the object member `key` (an empty object when missing).
  JsonFields Object(const char* key);
  // The fields of `element`, element `index` of this object's list `key` (errors name it
  // "\"key\"[index]"); an element that is not an object is an error.
  JsonFields Element(const char* key, const nlohmann::json& element, size_t index);

  // The object read (an empty one when it was missing or not an object).
  const nlohmann::json& json() const { return json_; }
  bool ok() const { return error_->ok(); }
  const Status& status() const { return *error_; }
  // Records a problem found by the caller, about `what` ("\"summary\".\"x\""), when none is yet.
  void Fail(const std::string& what, const std::string& problem);
  // The name of member `key` as errors give it: "\"figures\".\"step_time_scale\"".
  std::string Name(const char* key) const;

 private:
  JsonFields(const nlohmann::json& json, std::string file, std::string path, std::shared_ptr<Status> error);
  // The member `key`, or nullptr when it is missing or null.
  const nlohmann::json* Find(const char* key) const;

  const nlohmann::json& json_;
  std::string file_;
  std::string path_;  // the members around this object: "\"figures\"." ("" at the top)
  std::shared_ptr<Status> error_;
};

// `value` as a whole number in [min, max] (an integer, or a number with no fraction); nullopt when
// it is not one.
std::optional<int64_t> JsonWholeNumber(const nlohmann::json& value, int64_t min, int64_t max);

// `value` written for an error: numbers and strings as JSON writes them, made printable and short.
std::string JsonValueText(const nlohmann::json& value);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_JSON_FIELDS_H_
