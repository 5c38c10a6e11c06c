// ElasticTraining: the hvd.elastic program tests/python/elastic_recovery.py as the ranks of an
// elastic job on three one-slot hosts of the test cluster (over SSH or in a Slurm allocation), with
// --min-np 2: it trains a small model for 300 steps, committing every 10; rank 2 touches a file at
// step 50 (WaitUntilMidTraining), after which the test makes rank 2's host fail; rank 0 writes the
// time its first step of round 1 ended (SecondsToFirstStep); every rank of the round the job ends
// in checks that it ran every step, holds rank 0's parameters and that the job committed each sample
// of its ElasticSampler's epochs once (the ranks record them in a directory of this object's), and
// prints one line.
//
// A job that grows (GrowingProgram) runs tests/python/elastic_discovery.py instead, with
// --host-discovery-script: the script prints the hosts of a file, and rank 0 rewrites that file at
// step 50 of round 0; hvdrun starts a rank on the host added, and the ranks re-form round 1.
//
// The program imports torch: hvdrun.torch must be built and staged (UnusableReason). Not
// thread-safe.
#ifndef HVDRUN_TESTS_CLUSTER_ELASTIC_TRAINING_H_
#define HVDRUN_TESTS_CLUSTER_ELASTIC_TRAINING_H_

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/process_runner.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::cluster {

class ElasticTraining {
 public:
  ElasticTraining();

  // Empty when hvdrun.torch is built; otherwise why not, for a skip message.
  static std::string UnusableReason();

  // The end of hvdrun's command line that runs the program with Gloo: -x for the variables it reads
  // (the staged package on PYTHONPATH, the files below, and what it checks at its end: round 1,
  // one reset, to 2 ranks), then the interpreter and the script.
  std::vector<std::string> Program() const;

  // The end of hvdrun's command line for a job that grows: --host-discovery-script (a script
  // printing `first`, one host a line, until rank 0 of round 0 has run 50 steps, then `then`), -x
  // for what the program reads and checks (round 1 with `then_size` ranks), and the program.
  std::vector<std::string> GrowingProgram(const std::vector<std::string>& first,
                                          const std::vector<std::string>& then, int then_size) const;

  // Waits until rank 2 has run 50 steps; false after `timeout`.
  bool WaitUntilMidTraining(std::chrono::milliseconds timeout) const;

  // Seconds from `failure` to the end of rank 0's first step in round 1; none when it wrote none.
  std::optional<double> SecondsToFirstStep(std::chrono::system_clock::time_point failure) const;

  // Success when hvdrun exited 0 after re-forming round 1 on the two hosts other than `lost` (the
  // line that says so), and both ranks of round 1, on those hosts, ended with every step run and
  // identical parameters.
  testing::AssertionResult EndedOnTheSurvivors(const e2e::ProcessResult& result,
                                               const std::string& lost) const;

  // Success when hvdrun exited 0 after growing onto `added` in round 1 (the line that says so),
  // and the `size` ranks of round 1, one of them on `added`, ended with every step run and
  // identical parameters.
  testing::AssertionResult EndedGrown(const e2e::ProcessResult& result, const std::string& added,
                                      int size) const;

 private:
  // The ranks of round 1 (of `size`) that printed their end with every step run, the resets
  // `resets` (a regular expression) and rank 0's parameters: their hosts and ranks.
  static void RanksThatEnded(const std::string& output, int size, const std::string& resets,
                             std::set<std::string>* hosts, std::set<std::string>* ranks);

  std::string ProgressFile() const { return dir_.path() + "/progress"; }
  std::string FirstStepFile() const { return dir_.path() + "/first_step"; }
  std::string HostsFile() const { return dir_.path() + "/hosts"; }
  // Made by the constructor: every host of the cluster sees this machine's files.
  std::string SamplesDir() const { return dir_.path() + "/samples"; }

  e2e::ScratchDir dir_;
};

}  // namespace hvdrun::cluster

#endif  // HVDRUN_TESTS_CLUSTER_ELASTIC_TRAINING_H_
