#include "launcher/output_router.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <utility>

namespace hvdrun {
namespace {

// A kept stderr line is cut to this many bytes: enough to read an error, short enough for a table.
constexpr size_t kTailLineBytes = 400;

// The local time as asctime writes it: "Sat Nov  1 09:02:11 2025".
std::string LocalTimeStamp() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  char text[64];
  const size_t length = std::strftime(text, sizeof(text), "%a %b %e %H:%M:%S %Y", &local);
  return std::string(text, length);
}

}  // namespace

std::string RankDirName(int rank, int num_ranks) {
  const std::string largest = std::to_string(std::max(num_ranks - 1, 0));
  std::string number = std::to_string(rank);
  if (number.size() < largest.size()) number.insert(0, largest.size() - number.size(), '0');
  return "rank." + number;
}

std::string RoundRankDirName(int round, int rank, int round_size) {
  if (round == 0) return RankDirName(rank, round_size);
  return "round." + std::to_string(round) + "/" + RankDirName(rank, round_size);
}

Status OutputRouter::OpenRankFiles(const std::string& dir, int num_ranks) {
  files_.clear();
  for (int rank = 0; rank < num_ranks; ++rank) {
    if (Status status =
            AddRankFiles(rank, (std::filesystem::path(dir) / RankDirName(rank, num_ranks)).string());
        !status.ok()) {
      return status;
    }
  }
  return Status::Ok();
}

Status OutputRouter::AddRankFiles(int process, const std::string& rank_dir) {
  std::error_code error;
  std::filesystem::create_directories(rank_dir, error);
  if (error) return Status::Error("--output-filename: cannot create '" + rank_dir + "': " + error.message());
  RankFiles files;
  for (auto [name, file] : {std::pair{"stdout", &files.out}, std::pair{"stderr", &files.err}}) {
    std::string path = (std::filesystem::path(rank_dir) / name).string();
    file->reset(std::fopen(path.c_str(), "wb"));
    if (*file == nullptr) {
      return Status::Error("--output-filename: cannot write '" + path + "': " + std::strerror(errno));
    }
  }
  files_[process] = std::move(files);
  return Status::Ok();
}

void OutputRouter::Write(const protocol::RankOutput& output) {
  bool is_stdout = output.stream == protocol::OutputStream::kStdout;
  std::FILE* console = is_stdout ? out_ : err_;
  if (stamp_lines_) std::fputs(LocalTimeStamp().c_str(), console);
  auto shown = shown_as_.find(output.rank);
  std::fprintf(console, "[%d]<%s>:", shown != shown_as_.end() ? shown->second : output.rank,
               is_stdout ? "stdout" : "stderr");
  std::fwrite(output.data.data(), 1, output.data.size(), console);
  std::fputc('\n', console);

  if (auto found = files_.find(output.rank); found != files_.end()) {
    RankFiles& files = found->second;
    std::FILE* file = is_stdout ? files.out.get() : files.err.get();
    std::fwrite(output.data.data(), 1, output.data.size(), file);
    if (output.newline) std::fputc('\n', file);
  }

  if (!is_stdout) {
    std::string& partial = stderr_partial_[output.rank];
    if (partial.size() < kTailLineBytes) partial.append(output.data, 0, kTailLineBytes - partial.size());
    if (output.newline) {
      std::deque<std::string>& tail = stderr_tail_[output.rank];
      tail.push_back(std::move(partial));
      partial.clear();
      if (tail.size() > kStderrTailLines) tail.pop_front();
    }
  }
}

void OutputRouter::Flush() {
  std::fflush(out_);
  std::fflush(err_);
  for (auto& [process, files] : files_) {
    if (files.out) std::fflush(files.out.get());
    if (files.err) std::fflush(files.err.get());
  }
}

std::vector<std::string> OutputRouter::StderrTail(int process) const {
  std::vector<std::string> lines;
  if (auto it = stderr_tail_.find(process); it != stderr_tail_.end()) {
    lines.assign(it->second.begin(), it->second.end());
  }
  if (auto it = stderr_partial_.find(process); it != stderr_partial_.end() && !it->second.empty()) {
    lines.push_back(it->second);
    if (lines.size() > kStderrTailLines) lines.erase(lines.begin());
  }
  return lines;
}

}  // namespace hvdrun
