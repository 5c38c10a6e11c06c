#include "launcher/rendezvous/timeline_collector.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "common/timeline/timeline_merge.h"

namespace hvdrun {

namespace fs = std::filesystem;

StatusOr<std::unique_ptr<TimelineCollector>> TimelineCollector::Create(const std::string& out_file,
                                                                       const std::string& results_dir,
                                                                       const std::string& job_id) {
  const std::string rank_dir = "/tmp/hvdrun-" + job_id + "-timeline";
  if (!results_dir.empty()) {
    const std::string copies = results_dir + "/timeline";
    std::error_code error;
    fs::create_directories(copies, error);
    if (error) {
      return Status::Error("--timeline-filename: cannot create '" + copies + "': " + error.message());
    }
    return std::unique_ptr<TimelineCollector>(new TimelineCollector(out_file, rank_dir, copies, false));
  }
  std::string pattern = (fs::temp_directory_path() / "hvdrun-timeline-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Status::Error("--timeline-filename: cannot create '" + pattern + "': " + std::strerror(errno));
  }
  return std::unique_ptr<TimelineCollector>(new TimelineCollector(out_file, rank_dir, pattern, true));
}

TimelineCollector::TimelineCollector(std::string out_file, std::string rank_dir, std::string copies_dir,
                                     bool temporary)
    : out_file_(std::move(out_file)),
      rank_dir_(std::move(rank_dir)),
      copies_dir_(std::move(copies_dir)),
      temporary_(temporary) {}

TimelineCollector::~TimelineCollector() {
  std::error_code ignored;
  fs::remove_all(rank_dir_, ignored);
  if (temporary_) fs::remove_all(copies_dir_, ignored);
}

Status TimelineCollector::Merge(const std::vector<bool>& on_this_machine) {
  std::vector<std::string> files;
  std::vector<std::string> why;  // by rank: what the rank's note adds about where its file came from
  for (size_t rank = 0; rank < on_this_machine.size(); ++rank) {
    const std::string name = "/rank-" + std::to_string(rank) + ".json";
    std::error_code error;
    if (fs::exists(copies_dir_ + name, error)) {
      files.push_back(copies_dir_ + name);
      why.emplace_back();
    } else if (on_this_machine[rank] && fs::exists(rank_dir_ + name, error)) {
      files.push_back(rank_dir_ + name);
      why.emplace_back(" (the rank did not send it: this is its own file, as far as the rank wrote it)");
    } else {
      files.push_back(copies_dir_ + name);
      why.push_back(
          " (the rank sent none: its program does not use libhvdrun, or it ended before its runtime did" +
          (on_this_machine[rank] ? std::string(")") : "; its host may keep " + rank_dir_ + name + ")"));
    }
  }
  StatusOr<TimelineMergeSummary> summary = MergeTimelines(files, out_file_);
  if (!summary.ok()) return Status::Error("--timeline-filename: " + summary.status().message());
  uint64_t events = 0;
  for (const RankTimelineSummary& rank : summary.value().ranks) events += rank.events;
  std::fprintf(stderr, "hvdrun: timeline: %zu ranks, %llu events, in %s\n", files.size(),
               static_cast<unsigned long long>(events), out_file_.c_str());
  for (size_t rank = 0; rank < files.size(); ++rank) {
    const RankTimelineSummary& merged = summary.value().ranks[rank];
    if (merged.complete && why[rank].empty()) continue;
    std::fprintf(stderr, "hvdrun: timeline: rank %zu: %s%s\n", rank,
                 merged.complete ? "complete" : merged.note.c_str(), why[rank].c_str());
  }
  return Status::Ok();
}

}  // namespace hvdrun
