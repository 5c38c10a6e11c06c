#include "tests/lab/installed_lab.h"

#include <filesystem>

#include "tests/e2e/installed_program.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::lab_test {

e2e::ProcessResult RunLab(const std::vector<std::string>& args) { return StartLab(args).Wait(kLabTimeout); }

e2e::RunningProcess StartLab(const std::vector<std::string>& args) {
  return e2e::StartInstalled("hvdrun-lab", args);
}

nlohmann::json ReadJson(const std::string& path) {
  return nlohmann::json::parse(e2e::ReadFileBytes(path), nullptr, /*allow_exceptions=*/false);
}

std::vector<pid_t> ProcessesWorkingUnder(const std::string& dir) {
  std::vector<pid_t> found;
  std::error_code error;
  const std::string prefix = std::filesystem::weakly_canonical(dir, error).string() + "/";
  for (const std::filesystem::directory_entry& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code link_error;
    std::string cwd = std::filesystem::read_symlink(entry.path() / "cwd", link_error).string();
    if (!link_error && (cwd + "/").rfind(prefix, 0) == 0 && e2e::IsRunning(std::stoi(name))) {
      found.push_back(std::stoi(name));
    }
  }
  return found;
}

}  // namespace hvdrun::lab_test
