#include "tests/cluster/elastic_training.h"

#include <sys/stat.h>

#include <regex>
#include <set>
#include <sstream>
#include <thread>

namespace hvdrun::cluster {

std::string ElasticTraining::UnusableReason() {
#ifdef HVDRUN_TEST_ELASTIC_PROGRAM
  return "";
#else
  return "hvdrun.torch is not built (HVDRUN_PYTHON is off): no hvd.elastic program to run";
#endif
}

std::vector<std::string> ElasticTraining::Program() const {
#ifdef HVDRUN_TEST_ELASTIC_PROGRAM
  return {"-x",
          std::string("PYTHONPATH=") + HVDRUN_TEST_PYTHON_PATH,
          "-x",
          "ELASTIC_TEST_PROGRESS=" + ProgressFile(),
          "-x",
          "ELASTIC_TEST_FIRST_STEP=" + FirstStepFile(),
          "-x",
          "ELASTIC_TEST_ROUND=1",
          "-x",
          "ELASTIC_TEST_RESETS=2",
          "--gloo",
          HVDRUN_TEST_PYTHON,
          HVDRUN_TEST_ELASTIC_PROGRAM};
#else
  return {};
#endif
}

bool ElasticTraining::WaitUntilMidTraining(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  struct stat info {};
  while (::stat(ProgressFile().c_str(), &info) != 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::optional<double> ElasticTraining::SecondsToFirstStep(
    std::chrono::system_clock::time_point failure) const {
  std::istringstream text(e2e::ReadFileBytes(FirstStepFile()));
  double ended = 0;
  if (!(text >> ended)) return std::nullopt;
  return ended - std::chrono::duration<double>(failure.time_since_epoch()).count();
}

testing::AssertionResult ElasticTraining::EndedOnTheSurvivors(const e2e::ProcessResult& result,
                                                              const std::string& lost) const {
  if (result.exit_code != 0) return testing::AssertionFailure() << "hvdrun exited with " << result.exit_code;
  const std::string round =
      "hvdrun: elastic: round 1: 2 ranks on 2 hosts; hosts lost: " + lost + "; added: none;";
  if (result.stderr_text.find(round) == std::string::npos) {
    return testing::AssertionFailure() << "hvdrun printed no line '" << round << "'";
  }
  // "[i]<stdout>:worker HOST/SLOT/N: rank R of 2, round 1, step 300, resets [2], identical True"
  static const std::regex kEnded(
      R"(\]<stdout>:worker ([^/\n]+)/[0-9]+/[0-9]+: rank ([01]) of 2, round 1, step 300, resets \[2\], identical True\n)");
  std::set<std::string> hosts;
  std::set<std::string> ranks;
  for (auto it = std::sregex_iterator(result.stdout_text.begin(), result.stdout_text.end(), kEnded);
       it != std::sregex_iterator(); ++it) {
    hosts.insert((*it)[1].str());
    ranks.insert((*it)[2].str());
  }
  if (hosts.size() != 2 || ranks.size() != 2 || hosts.count(lost) != 0) {
    return testing::AssertionFailure() << "not both ranks of round 1, on hosts other than " << lost
                                       << ", ended with 300 steps and rank 0's parameters";
  }
  return testing::AssertionSuccess();
}

}  // namespace hvdrun::cluster
