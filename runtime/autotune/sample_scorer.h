// SampleScorer: turns the cycles a rank runs into scores of the setting they ran under: bytes
// reduced per second of training step.
//
// A step is what the job does between two rounds of the same tensor names: it ends where a cycle
// runs a name already run in the current step (that cycle starts the next step). A name the job
// uses several times a step, one call after another (Horovod's SyncBatchNorm gives every layer's
// collectives the same name), would cut a step into pieces: such a name is told by the other names'
// rounds, and from then on it ends no step. When a name comes round again, every name run
// kRepeatsInStep or more times since its last round is one used several times a step (a name used
// once a step runs at most twice between two rounds of another, even where their order changes
// from step to step). Steps cut short before that is learnt do not count: when it is, the sample in
// progress starts again, from the next whole step. A step's time runs
// from the end of the last cycle of the step before to the end of its own last cycle, so it holds
// the job's compute as well as the collectives; its bytes are those its cycles reduced. The job's
// first round is not a step: what came before it (the program's own start) is no step's time. A
// sample is
// `steps_per_sample` steps; its score is the median of its steps' rates (one slow step, a page fault
// or a checkpoint, does not sway it) and its spread their standard deviation.
//
// Where steps end depends only on the names run, which every rank agrees on (the negotiated order),
// so every rank's scorer completes each sample in the same cycle; only the times differ between ranks.
// Not thread-safe.
#ifndef HVDRUN_RUNTIME_AUTOTUNE_SAMPLE_SCORER_H_
#define HVDRUN_RUNTIME_AUTOTUNE_SAMPLE_SCORER_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hvdrun {

class SampleScorer {
 public:
  using Clock = std::chrono::steady_clock;

  struct Score {
    double bytes_per_second = 0;  // the median step's
    double spread = 0;            // standard deviation of the steps' rates, bytes per second
    int steps = 0;
  };

  // `steps_per_sample` >= 1.
  explicit SampleScorer(int steps_per_sample);

  // Records a cycle that ran `names`, reducing `bytes` in all, and ended at `end`. Returns the
  // sample's score when this cycle completes one (it then counts in the next sample).
  std::optional<Score> Record(const std::vector<std::string>& names, uint64_t bytes, Clock::time_point end);
  // Whether a Record since the last call learnt a name used several times a step: the samples
  // scored before were of steps cut short. Clears it.
  bool TakeRestart() { return std::exchange(restarted_, false); }

 private:
  // Runs of a name between two rounds of another that make it one used several times a step.
  static constexpr int kRepeatsInStep = 3;

  // Where a name ran in the stream of every name run: its last kRepeatsInStep places, the latest
  // first (0: none yet), and whether it is used several times a step.
  struct NameRuns {
    std::array<uint64_t, kRepeatsInStep> places{};
    bool several_a_step = false;
  };

  // Ends the current step at last_end_.
  void EndStep();
  // Records that `name` ran next in the stream, learning from its round which names are used
  // several times a step; true when that found one not known before.
  bool Learn(const std::string& name);
  // Whether `name`, run in this cycle, ends the current step.
  bool EndsStep(const std::string& name) const;

  const int steps_per_sample_;
  std::unordered_map<std::string, NameRuns> runs_;
  uint64_t place_ = 0;  // the names run so far
  bool restarted_ = false;
  bool first_round_ = true;  // the job's first round, before any step
  std::set<std::string> step_names_;
  uint64_t step_bytes_ = 0;
  Clock::time_point step_start_{};
  Clock::time_point last_end_{};
  std::vector<double> rates_;  // of the current sample's steps
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_AUTOTUNE_SAMPLE_SCORER_H_
