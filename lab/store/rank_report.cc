#include "lab/store/rank_report.h"

#include "common/error_text.h"
#include "lab/experiment/experiment_limits.h"
#include "lab/json_fields.h"

namespace hvdrun::lab {
namespace {

// Reads the numbers of one rank's report. A member of another type than the report expects is a
// program's own and is left out, as before; a number out of range is the first error, kept.
class RankReportReader {
 public:
  explicit RankReportReader(const std::string& file) : file_(file) {}

  // The number at `object`[`key`] (`where` names `object` in errors: "\"results\"[2]."); nullopt
  // when it is missing or not a number.
  std::optional<double> Figure(const nlohmann::json& object, const std::string& where,
                               const std::string& key) {
    auto it = object.is_object() ? object.find(key) : object.end();
    if (!object.is_object() || it == object.end() || !it->is_number()) return std::nullopt;
    const double value = it->get<double>();
    if (value >= -kMaxFigure && value <= kMaxFigure) return value;
    Fail(where + "\"" + PrintableText(key) + "\" is " + JsonValueText(*it) +
         "; expected a number from -1e+15 to 1e+15");
    return std::nullopt;
  }

  // `object`[`key`] when it is a string, else "".
  static std::string Text(const nlohmann::json& object, const char* key) {
    auto it = object.is_object() ? object.find(key) : object.end();
    return object.is_object() && it != object.end() && it->is_string() ? it->get<std::string>() : "";
  }

  // `object`[`key`] when it is of `type` (an object or a list), else an empty one.
  static const nlohmann::json& Member(const nlohmann::json& object, const char* key,
                                      nlohmann::json::value_t type) {
    static const nlohmann::json kEmptyObject = nlohmann::json::object();
    static const nlohmann::json kEmptyList = nlohmann::json::array();
    auto it = object.is_object() ? object.find(key) : object.end();
    if (object.is_object() && it != object.end() && it->type() == type) return *it;
    return type == nlohmann::json::value_t::object ? kEmptyObject : kEmptyList;
  }

  void Fail(const std::string& problem) {
    if (status_.ok()) status_ = Status::Error(file_ + ": " + problem);
  }
  const Status& status() const { return status_; }

 private:
  std::string file_;
  Status status_ = Status::Ok();
};

void ReadSummary(RankReportReader& reader, const nlohmann::json& report, RankReport& read) {
  const nlohmann::json& summary =
      RankReportReader::Member(report, "summary", nlohmann::json::value_t::object);
  for (const auto& item : summary.items()) {
    std::optional<double> value = reader.Figure(summary, "\"summary\".", item.key());
    if (value) read.figures[item.key()] = *value;
  }
  std::optional<double> threads = reader.Figure(report, "", "threads");
  if (threads) {
    const std::optional<int64_t> whole = JsonWholeNumber(report.at("threads"), 1, kMaxThreads);
    if (!whole) {
      reader.Fail("\"threads\" is " + JsonValueText(report.at("threads")) +
                  "; expected a whole number from 1 to " + std::to_string(kMaxThreads));
    }
    read.threads = static_cast<int>(whole.value_or(0));
  }
}

void ReadSizes(RankReportReader& reader, const nlohmann::json& report, RankReport& read) {
  const nlohmann::json& list = RankReportReader::Member(report, "results", nlohmann::json::value_t::array);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = "\"results\"[" + std::to_string(i) + "].";
    std::optional<double> bytes = reader.Figure(list[i], where, "bytes");
    std::optional<double> time_us = reader.Figure(list[i], where, "time_us");
    std::optional<double> busbw = reader.Figure(list[i], where, "busbw_gbps");
    if (bytes && time_us) read.sizes.push_back(AllreduceSize{*bytes, *time_us, busbw});
  }
}

void ReadResponses(RankReportReader& reader, const nlohmann::json& report, RankReport& read) {
  const nlohmann::json& libhvdrun =
      RankReportReader::Member(report, "libhvdrun", nlohmann::json::value_t::object);
  read.allreduce_path = RankReportReader::Text(report, "allreduce_path");
  if (read.allreduce_path.empty()) read.allreduce_path = RankReportReader::Text(libhvdrun, "allreduce_path");
  const nlohmann::json& responses =
      RankReportReader::Member(libhvdrun, "responses", nlohmann::json::value_t::object);
  const nlohmann::json& bins = RankReportReader::Member(responses, "bins", nlohmann::json::value_t::array);
  for (size_t i = 0; i < bins.size(); ++i) {
    const std::string where = "\"libhvdrun\".\"responses\".\"bins\"[" + std::to_string(i) + "].";
    std::optional<double> lower = reader.Figure(bins[i], where, "lower_bytes");
    std::optional<double> upper = reader.Figure(bins[i], where, "upper_bytes");
    std::optional<double> count = reader.Figure(bins[i], where, "responses");
    std::optional<double> tensors = reader.Figure(bins[i], where, "tensors");
    std::optional<double> bytes = reader.Figure(bins[i], where, "bytes");
    std::optional<double> seconds = reader.Figure(bins[i], where, "seconds");
    if (!lower || !upper || !count || !bytes || !seconds) continue;
    read.responses.push_back(ResponseBin{*lower, *upper, *count, tensors.value_or(0), *bytes, *seconds});
  }
}

}  // namespace

StatusOr<RankReport> RankReportFromJson(int rank, const nlohmann::json& report, const std::string& file) {
  RankReportReader reader(file);
  RankReport read;
  read.rank = rank;
  ReadSummary(reader, report, read);
  read.framework = RankReportReader::Text(report, "framework");
  const std::string version = RankReportReader::Text(report, "framework_version");
  if (!read.framework.empty() && !version.empty()) read.framework += " " + version;
  ReadSizes(reader, report, read);
  ReadResponses(reader, report, read);
  if (!reader.status().ok()) return reader.status();
  return read;
}

}  // namespace hvdrun::lab
