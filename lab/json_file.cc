#include "lab/json_file.h"

#include <algorithm>

#include "common/error_text.h"
#include "lab/whole_file.h"

namespace hvdrun::lab {
namespace {

// A first pass over the text that builds nothing: it checks the depth and finds where the text
// stops being JSON, so that the document is built only from text known to be within bounds.
class BoundsCheck : public nlohmann::json::json_sax_t {
 public:
  bool null() override { return true; }
  bool boolean(bool /*value*/) override { return true; }
  bool number_integer(number_integer_t /*value*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*value*/) override { return true; }
  bool number_float(number_float_t /*value*/, const string_t& /*text*/) override { return true; }
  bool string(string_t& /*value*/) override { return true; }
  bool binary(binary_t& /*value*/) override { return true; }
  bool start_object(std::size_t /*elements*/) override { return Enter(); }
  bool key(string_t& /*value*/) override { return true; }
  bool end_object() override { return Leave(); }
  bool start_array(std::size_t /*elements*/) override { return Enter(); }
  bool end_array() override { return Leave(); }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::json::exception& /*error*/) override {
    error_position = position;
    error_token = last_token;
    return false;
  }

  bool too_deep = false;
  size_t error_position = 0;  // bytes read when the text stopped being JSON
  std::string error_token;    // the text nlohmann's lexer read last

 private:
  bool Enter() {
    too_deep = ++depth_ > kMaxJsonDepth;
    return !too_deep;
  }
  bool Leave() {
    --depth_;
    return true;
  }

  int depth_ = 0;
};

// "LABEL:LINE:COLUMN: " for the byte `offset` of `text` (1-based; the column counts bytes).
std::string Place(const std::string& label, std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t line_start = before.rfind('\n');
  const size_t column = line_start == std::string_view::npos ? offset + 1 : offset - line_start;
  return label + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
}

}  // namespace

StatusOr<nlohmann::json> ParseJson(std::string_view text, const std::string& label) {
  BoundsCheck check;
  if (!nlohmann::json::sax_parse(text, &check)) {
    if (check.too_deep) {
      return Status::Error(label + ": nested deeper than " + std::to_string(kMaxJsonDepth) +
                           " levels of objects and lists, the most hvdrun-lab reads");
    }
    const size_t at = check.error_position == 0 ? 0 : check.error_position - 1;
    if (check.error_position > text.size() || check.error_token.empty()) {
      return Status::Error(Place(label, text, text.size()) + "not valid JSON: the text ends inside a value");
    }
    return Status::Error(Place(label, text, at) + "not valid JSON: unexpected '" +
                         PrintableText(check.error_token) + "'");
  }
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return Status::Error(label + ": not valid JSON");
  return json;
}

StatusOr<nlohmann::json> ReadJsonFile(const std::string& path) {
  StatusOr<std::string> text = ReadWholeFile(path, kMaxJsonFileBytes);
  if (!text.ok()) return text.status();
  return ParseJson(text.value(), path);
}

std::string JsonFileText(const nlohmann::json& json) {
  return json.dump(2, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace hvdrun::lab
