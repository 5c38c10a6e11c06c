#include "launcher/output_router.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

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

Status OutputRouter::OpenRankFiles(const std::string& dir, int num_ranks) {
  files_.clear();
  files_.resize(num_ranks);
  for (int rank = 0; rank < num_ranks; ++rank) {
    std::filesystem::path rank_dir = std::filesystem::path(dir) / RankDirName(rank, num_ranks);
    std::error_code error;
    std::filesystem::create_directories(rank_dir, error);
    if (error) {
      return Status::Error("--output-filename: cannot create '" + rank_dir.string() +
                           "': " + error.message());
    }
    for (auto [name, file] :
         {std::pair{"stdout", &files_[rank].out}, std::pair{"stderr", &files_[rank].err}}) {
      std::string path = (rank_dir / name).string();
      file->reset(std::fopen(path.c_str(), "wb"));
      if (*file == nullptr) {
        return Status::Error("--output-filename: cannot write '" + path + "': " + std::strerror(errno));
      }
    }
  }
  return Status::Ok();
}

void OutputRouter::Write(const protocol::RankOutput& output) {
  bool is_stdout = output.stream == protocol::OutputStream::kStdout;
  std::FILE* console = is_stdout ? out_ : err_;
  if (stamp_lines_) std::fputs(LocalTimeStamp().c_str(), console);
  std::fprintf(console, "[%d]<%s>:", output.rank, is_stdout ? "stdout" : "stderr");
  std::fwrite(output.data.data(), 1, output.data.size(), console);
  std::fputc('\n', console);

  if (output.rank >= 0 && static_cast<size_t>(output.rank) < files_.size()) {
    RankFiles& files = files_[output.rank];
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
  for (RankFiles& files : files_) {
    if (files.out) std::fflush(files.out.get());
    if (files.err) std::fflush(files.err.get());
  }
}

std::vector<std::string> OutputRouter::StderrTail(int rank) const {
  std::vector<std::string> lines;
  if (auto it = stderr_tail_.find(rank); it != stderr_tail_.end()) {
    lines.assign(it->second.begin(), it->second.end());
  }
  if (auto it = stderr_partial_.find(rank); it != stderr_partial_.end() && !it->second.empty()) {
    lines.push_back(it->second);
    if (lines.size() > kStderrTailLines) lines.erase(lines.begin());
  }
  return lines;
}

}  // namespace hvdrun
