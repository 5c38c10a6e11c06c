#include "lab/run/progress_display.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "lab/number_text.h"

namespace hvdrun::lab {

namespace {

constexpr const char* kClearLine = "\r\033[K";

double Seconds(ProgressDisplay::Clock::duration duration) {
  return std::chrono::duration<double>(duration).count();
}

}  // namespace

ProgressDisplay::ProgressDisplay(std::ostream& out, Options options, Clock::time_point start)
    : out_(out), options_(options), start_(start) {}

void ProgressDisplay::AddKeptRuns(int runs, double mean_seconds) {
  done_ += runs;
  kept_mean_seconds_ = mean_seconds;
}

std::string ProgressDisplay::FormatDuration(double seconds) {
  const int64_t total = std::llround(std::max(0.0, seconds));
  auto two_digits = [](int64_t value) {
    std::string digits = value < 10 ? "0" : "";
    digits += std::to_string(value);
    return digits;
  };
  if (total >= 3600) {
    return std::to_string(total / 3600) + ":" + two_digits(total / 60 % 60) + ":" + two_digits(total % 60);
  }
  return std::to_string(total / 60) + ":" + two_digits(total % 60);
}

std::string ProgressDisplay::Counts() const {
  std::string counts = std::to_string(done_) + "/" + std::to_string(options_.total_runs);
  if (failed_ > 0) counts += ", " + std::to_string(failed_) + " failed";
  return "[" + counts + "]";
}

std::string ProgressDisplay::Times(Clock::time_point now) const {
  std::string text = FormatDuration(Seconds(now - start_)) + " elapsed";
  int left = options_.total_runs - done_;
  if (left <= 0) return text;
  double mean = made_ > 0 ? made_seconds_ / made_ : kept_mean_seconds_;
  if (mean <= 0) return text + ", estimating what is left";
  double remaining = mean * left;
  if (!current_.empty()) remaining = std::max(mean * (left - 1), remaining - Seconds(now - current_start_));
  return text + ", about " + FormatDuration(remaining) + " left";
}

void ProgressDisplay::ClearStatus() {
  if (status_shown_) out_ << kClearLine;
  status_shown_ = false;
}

void ProgressDisplay::RunStarted(const std::string& label, Clock::time_point now) {
  current_ = label;
  current_start_ = now;
  if (options_.terminal) {
    Tick(now);
  } else {
    out_ << Counts() << " running " << label << " (" << Times(now) << ")\n" << std::flush;
  }
}

void ProgressDisplay::Tick(Clock::time_point now) {
  if (!options_.terminal) return;
  std::string line = Counts() + " " + Times(now);
  if (!current_.empty()) line += " | " + current_ + " for " + FormatDuration(Seconds(now - current_start_));
  if (options_.width > 1 && line.size() > options_.width - 1) line.resize(options_.width - 1);
  if (status_shown_ && line == status_) return;
  out_ << kClearLine << line << std::flush;
  status_ = line;
  status_shown_ = true;
}

void ProgressDisplay::RunFinished(bool ok, const std::string& error, double seconds, Clock::time_point now) {
  ++done_;
  ++made_;
  made_seconds_ += seconds;
  if (!ok) ++failed_;
  const std::string took = NumberText("%.1f s", seconds);
  std::string label = current_;
  current_.clear();
  ClearStatus();
  out_ << Counts() << (ok ? " ok     " : " FAILED ") << label << " in " << took;
  if (!ok) out_ << ": " << error;
  out_ << " (" << Times(now) << ")\n";
  if (options_.terminal) Tick(now);
  out_ << std::flush;
}

void ProgressDisplay::Message(const std::string& line) {
  ClearStatus();
  out_ << line << "\n" << std::flush;
}

void ProgressDisplay::Finish() {
  ClearStatus();
  out_ << std::flush;
}

}  // namespace hvdrun::lab
