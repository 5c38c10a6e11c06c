#include "launcher/mpirun/mpirun_banner_filter.h"

#include <string_view>

namespace hvdrun {
namespace {

// Open MPI's frame: a line of 74 dashes; any line of 20 or more dashes counts.
bool IsDashLine(const std::string& line) {
  return line.size() >= 20 && line.find_first_not_of('-') == std::string::npos;
}

// The first lines of the banners whose news hvdrun's own report gives.
bool RestatesTheFailure(const std::vector<std::string>& banner) {
  for (size_t i = 1; i < banner.size(); ++i) {
    const std::string& line = banner[i];
    if (line.empty()) continue;
    return (line.starts_with("Primary job") && line.find("terminated normally") != std::string::npos) ||
           line.starts_with("mpirun detected that one or more processes exited with non-zero status") ||
           line.starts_with("mpirun noticed that process rank");
  }
  return false;
}

}  // namespace

std::vector<std::string> MpirunBannerFilter::Add(std::string line) {
  std::vector<std::string> now;
  if (open_banner_.empty()) {
    if (IsDashLine(line)) {
      open_banner_.push_back(std::move(line));
    } else {
      now.push_back(std::move(line));
    }
    return now;
  }
  bool closes = IsDashLine(line);
  open_banner_.push_back(std::move(line));
  if (!closes && open_banner_.size() < kMaxBannerLines) return now;
  std::vector<std::string>& destination = closes && RestatesTheFailure(open_banner_) ? held_ : now;
  destination.insert(destination.end(), open_banner_.begin(), open_banner_.end());
  open_banner_.clear();
  return now;
}

std::vector<std::string> MpirunBannerFilter::Finish(bool drop_restated) {
  std::vector<std::string> now;
  if (!drop_restated) now = std::move(held_);
  now.insert(now.end(), open_banner_.begin(), open_banner_.end());
  held_.clear();
  open_banner_.clear();
  return now;
}

}  // namespace hvdrun
