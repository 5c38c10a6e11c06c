#include "tests/e2e/installed_hvdrun.h"

#include "tests/e2e/installed_program.h"

namespace hvdrun::e2e {

std::string HvdrunPath() { return InstalledProgram("hvdrun"); }

std::string TestRankPath() { return HVDRUN_TEST_RANK_PATH; }

ProcessResult RunHvdrun(const std::vector<std::string>& args, const ProcessOptions& options) {
  return StartHvdrun(args, options).Wait(kRunTimeout);
}

RunningProcess StartHvdrun(const std::vector<std::string>& args, const ProcessOptions& options) {
  return StartInstalled("hvdrun", args, options);
}

std::vector<std::string> RankCommand(const std::vector<std::string>& args) {
  return Concat({{TestRankPath()}, args});
}

std::vector<std::string> Concat(std::initializer_list<std::vector<std::string>> parts) {
  std::vector<std::string> all;
  for (const std::vector<std::string>& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

}  // namespace hvdrun::e2e
