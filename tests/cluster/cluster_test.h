// ClusterTest: the fixture of the end-to-end tests on the test cluster (docs/testing-cluster.md),
// which drive the installed hvdrun (tests/e2e/installed_hvdrun.h) in the launcher's namespace.
//
// A suite derives from it and builds its cluster in SetUpTestSuite with CreateCluster(servers);
// every test of the suite shares that cluster (ctest runs each test in a process of its own, so
// each gets a fresh one). Without root every test skips, saying why; a cluster that could not be
// built fails each test with the reason. Not thread-safe.
#ifndef HVDRUN_TESTS_CLUSTER_CLUSTER_TEST_H_
#define HVDRUN_TESTS_CLUSTER_CLUSTER_TEST_H_

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/cluster/test_cluster.h"
#include "tests/e2e/process_runner.h"

namespace hvdrun::cluster {

// /proc/<pid>/comm: the program's name, "" once it is gone.
std::string ProgramName(pid_t pid);

// Those of `pids` whose program is named `name`.
std::vector<pid_t> ProgramsIn(const std::vector<pid_t>& pids, const std::string& name);

// `text` split at newlines, without them.
std::vector<std::string> Lines(const std::string& text);

// A program of the staged install, beside the installed hvdrun: "hvdrun-agent", "hvdrun-bench".
std::string StagedProgram(const std::string& name);

// `argv` run in a mount namespace of its own in which `source` is bind-mounted over `target`
// (both directories): what the program sees there, no other process does.
std::vector<std::string> WithBindMount(const std::string& source, const std::string& target,
                                       const std::vector<std::string>& argv);

class ClusterTest : public testing::Test {
 protected:
  // For SetUpTestSuite: builds the suite's cluster of `servers` servers, as root.
  static void CreateCluster(int servers);
  static void TearDownTestSuite();
  void SetUp() override;

  // Whether the suite has its cluster; c() only then (as in a TearDown after a failed SetUp).
  static bool has_cluster() { return cluster_ != nullptr; }
  const TestCluster& c() const { return *cluster_; }
  // The suite's cluster, for a SetUpTestSuite that starts more on it; nullptr when it has none.
  static const TestCluster* suite_cluster() { return cluster_; }

  // Runs `argv` in the launcher's namespace without an ssh-agent (SSH_AUTH_SOCK unset), so that
  // hvdrun logs in with the keys the test names only; waits up to `timeout`.
  e2e::ProcessResult RunInLauncher(const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout) const;
  // The same, left running.
  e2e::RunningProcess StartInLauncher(const std::vector<std::string>& argv) const;

  // Success when `host`'s shell, for the user the cluster logs in as, finds no `program` in its PATH
  // (`command -v` over ssh); otherwise says where it found it, or how ssh failed.
  testing::AssertionResult NotInPath(const ClusterHost& host, const std::string& program) const;

  // Waits until `count` processes named `program` run in the cluster; false after `timeout`.
  bool WaitForPrograms(const std::string& program, size_t count, std::chrono::milliseconds timeout) const;

  // Waits until no process of the cluster is one that `counts`; returns those left after `timeout`.
  std::vector<pid_t> WaitUntilNone(const std::function<bool(pid_t)>& counts,
                                   std::chrono::milliseconds timeout) const;

  // Waits until the cluster runs its sshds only, as every test should leave it; returns the other
  // processes left after `timeout`.
  std::vector<pid_t> WaitUntilOnlySshds(std::chrono::milliseconds timeout) const;

  // Waits until no hvdrun-agent and no process named in `programs` (a rank's program, srun) runs
  // in the cluster; returns those left after `timeout`.
  std::vector<pid_t> WaitForNoLeftovers(const std::vector<std::string>& programs,
                                        std::chrono::milliseconds timeout) const;

  // hvdrun's options that reach the cluster's servers over SSH: the user key, a known_hosts (by
  // default the cluster's), and the staged hvdrun-agent as --agent-path.
  std::vector<std::string> SshFlags(const std::string& known_hosts = "") const;

 private:
  // Owned; created by CreateCluster, deleted by TearDownTestSuite.
  static TestCluster* cluster_;
  static std::string* create_error_;
};

}  // namespace hvdrun::cluster

#endif  // HVDRUN_TESTS_CLUSTER_CLUSTER_TEST_H_
