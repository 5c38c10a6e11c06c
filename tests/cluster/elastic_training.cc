#include "tests/cluster/elastic_training.h"

#include <sys/stat.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

namespace hvdrun::cluster {

ElasticTraining::ElasticTraining() { std::filesystem::create_directories(SamplesDir()); }

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
          "ELASTIC_TEST_SAMPLES=" + SamplesDir(),
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

std::vector<std::string> ElasticTraining::GrowingProgram(const std::vector<std::string>& first,
                                                         const std::vector<std::string>& then,
                                                         int then_size) const {
#ifdef HVDRUN_TEST_ELASTIC_GROWTH_PROGRAM
  std::string hosts;
  for (const std::string& host : first) hosts += host + "\n";
  dir_.WriteFile("hosts", hosts);
  const std::string script = dir_.WriteFile("hosts.sh", "#!/bin/sh\nexec cat '" + HostsFile() + "'\n");
  ::chmod(script.c_str(), 0755);
  std::string new_hosts;
  for (const std::string& host : then) new_hosts += (new_hosts.empty() ? "" : " ") + host;
  return {"--host-discovery-script",
          script,
          "-x",
          std::string("PYTHONPATH=") + HVDRUN_TEST_PYTHON_PATH,
          "-x",
          "ELASTIC_TEST_HOSTS_FILE=" + HostsFile(),
          "-x",
          "ELASTIC_TEST_NEW_HOSTS=" + new_hosts,
          "-x",
          "ELASTIC_TEST_SIZE=" + std::to_string(then_size),
          "-x",
          "ELASTIC_TEST_SAMPLES=" + SamplesDir(),
          "--gloo",
          HVDRUN_TEST_PYTHON,
          HVDRUN_TEST_ELASTIC_GROWTH_PROGRAM};
#else
  (void)first;
  (void)then;
  (void)then_size;
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
  std::set<std::string> hosts;
  std::set<std::string> ranks;
  RanksThatEnded(result.stdout_text, 2, R"(\[2\])", &hosts, &ranks);
  if (hosts.size() != 2 || ranks.size() != 2 || hosts.count(lost) != 0) {
    return testing::AssertionFailure() << "not both ranks of round 1, on hosts other than " << lost
                                       << ", ended with 300 steps and rank 0's parameters";
  }
  return testing::AssertionSuccess();
}

testing::AssertionResult ElasticTraining::EndedGrown(const e2e::ProcessResult& result,
                                                     const std::string& added, int size) const {
  if (result.exit_code != 0) return testing::AssertionFailure() << "hvdrun exited with " << result.exit_code;
  const std::string round = "hvdrun: elastic: round 1: " + std::to_string(size) + " ranks on " +
                            std::to_string(size) + " hosts; hosts lost: none; added: " + added +
                            "; why: new slots on " + added + ";";
  if (result.stderr_text.find(round) == std::string::npos) {
    return testing::AssertionFailure() << "hvdrun printed no line '" << round << "'";
  }
  std::set<std::string> hosts;
  std::set<std::string> ranks;
  // The ranks that were there reset once, to `size`; the one added started in round 1.
  RanksThatEnded(result.stdout_text, size, R"(\[()" + std::to_string(size) + R"()?\])", &hosts, &ranks);
  if (static_cast<int>(hosts.size()) != size || static_cast<int>(ranks.size()) != size ||
      hosts.count(added) == 0) {
    return testing::AssertionFailure() << "not all " << size << " ranks of round 1, one on " << added
                                       << ", ended with 300 steps and rank 0's parameters";
  }
  return testing::AssertionSuccess();
}

void ElasticTraining::RanksThatEnded(const std::string& output, int size, const std::string& resets,
                                     std::set<std::string>* hosts, std::set<std::string>* ranks) {
  // "[i]<stdout>:worker HOST/SLOT/N: rank R of SIZE, round 1, step 300, resets [..], identical True,
  // samples each once (...)"
  const std::regex ended(R"(\]<stdout>:worker ([^/\n]+)/[0-9]+/[0-9]+: rank ([0-9]+) of )" +
                         std::to_string(size) + ", round 1, step 300, resets " + resets +
                         R"(, identical True, samples each once \()");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), ended); it != std::sregex_iterator();
       ++it) {
    hosts->insert((*it)[1].str());
    ranks->insert((*it)[2].str());
  }
}

}  // namespace hvdrun::cluster
