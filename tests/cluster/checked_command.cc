#include "tests/cluster/checked_command.h"

#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "tests/e2e/process_runner.h"

namespace hvdrun::cluster {
namespace {

// Searched after PATH: where Debian installs ip and sshd (sbin) and the rest (bin).
constexpr std::string_view kFallbackDirs[] = {"/usr/sbin", "/sbin", "/usr/bin", "/bin"};

bool IsExecutableFile(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

std::string LastLine(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  size_t start = text.rfind('\n');
  return std::string(start == std::string_view::npos ? text : text.substr(start + 1));
}

}  // namespace

std::string FindProgram(const std::string& name) {
  std::vector<std::string> dirs;
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "";
  while (!rest.empty()) {
    size_t colon = rest.find(':');
    std::string_view dir = rest.substr(0, colon);
    if (!dir.empty() && dir.front() == '/') dirs.emplace_back(dir);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  dirs.insert(dirs.end(), std::begin(kFallbackDirs), std::end(kFallbackDirs));
  for (const std::string& dir : dirs) {
    std::string candidate = dir + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
  }
  return "";
}

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i > 0) line += ' ';
    line += i == 0 ? argv[i].substr(argv[i].rfind('/') + 1) : argv[i];
  }
  return line;
}

StatusOr<std::string> RunChecked(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  e2e::ProcessResult result = e2e::RunProcess(argv, timeout);
  std::string failed = "'" + CommandLine(argv) + "' failed";
  if (!result.start_error.empty()) return Status::Error(failed + ": " + result.start_error);
  if (result.timed_out) {
    return Status::Error(failed + ": no exit within " + std::to_string(timeout.count()) + " ms");
  }
  if (result.term_signal != 0) {
    return Status::Error(failed + ": killed by signal " + std::to_string(result.term_signal));
  }
  if (result.exit_code != 0) {
    std::string why = LastLine(result.stderr_text);
    return Status::Error(failed + " (exit " + std::to_string(result.exit_code) + ")" +
                         (why.empty() ? "" : ": " + why));
  }
  return std::move(result.stdout_text);
}

}  // namespace hvdrun::cluster
