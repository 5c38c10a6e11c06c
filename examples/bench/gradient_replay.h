// hvdrun-bench --replay MODEL: a training step's gradient traffic without the training.
//
// Every rank submits MODEL's gradient tensors (examples/shared/model_gradients.h: float32, in
// backward order), one named asynchronous allreduce each (--op: sum, as the baseline's, or average), through
// libhvdrun's negotiated path (CollectiveOrder::kNegotiated: negotiation, response cache, fusion), and waits
// for all: one step. Each setting of the fusion threshold and cycle time (the sweep's lists; by default
// hvdrun's setting, from Horovod's variables) gets its own Runtime and is timed over `steps` steps after
// `warmup`; the median step is reported. With --baseline the same run also times the backend
// library's own allreduce (Runtime::BaselineAllreduce) of the whole gradient in one call, and of
// the tensors one by one: the faster of the two is what fusion is measured against. After timing,
// one more step's results are checked on every rank.
//
// With --compression F1,F2,... each setting's Runtime times every format listed (the per-call
// Runtime::AllreduceAsync overload, each format under names of its own), interleaved step by step
// so that load on a shared machine reaches them alike, each step starting from the same gradient-like
// values (ReplayGradients::MakeInputs, replay_gradients.h). Per format: the median step, its ratio to
// `none`'s in the same setting, the bytes sent over a float32 ring allreduce's (compression_counters() over
// its steps), and the accuracy of one step's results against the exact float32 sums of the same inputs
// (examples/bench/reduction_error.h), taken under fresh names so that no error feedback from the
// timed steps is carried into it.
#ifndef HVDRUN_EXAMPLES_BENCH_GRADIENT_REPLAY_H_
#define HVDRUN_EXAMPLES_BENCH_GRADIENT_REPLAY_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hvdrun/status.h"
#include "hvdrun/types.h"

namespace hvdrun {

struct ReplayOptions {
  std::string model;
  // Empty: one setting, hvdrun's (HOROVOD_FUSION_THRESHOLD, HOROVOD_CYCLE_TIME, or the defaults).
  std::vector<double> fusion_threshold_mb;  // MiB, as horovodrun's --fusion-threshold-mb
  std::vector<double> cycle_time_ms;
  // Empty: the job's format (hvdrun --compression). Else each setting times every format listed,
  // through the per-call overload of one Runtime, interleaved step by step, and measures each one's
  // bytes sent and its accuracy against the exact float32 sums.
  std::vector<CompressionFormat> compression;
  ReduceOp op = ReduceOp::kSum;  // kSum or kAverage (what a trainer asks for)
  int steps = 20;
  int warmup = 5;
  bool baseline = false;
  std::string json_path;
  // Process sets registered on each setting's Runtime before its steps and never used (the first
  // holds every rank, set k > 1 every rank but rank k - 2; at most size + 1 of them): what their
  // presence, their engines' idle cycles included, costs the job's own collectives.
  int process_sets = 0;
};

// "0,64,128" given to `flag`: non-negative decimal numbers, at most `max` each. Errors name the flag
// and the item: "--fusion-threshold-mb: 'x' is not a number from 0 to 1024".
StatusOr<std::vector<double>> ParseNumberList(std::string_view flag, std::string_view text, double max);

// "none,fp16,fp8" given to `flag`: names ParseCompressionFormat takes, each format once. Errors name the
// flag and the item: "--compression: 'fp9' is not a compression format (none, ...)".
StatusOr<std::vector<CompressionFormat>> ParseCompressionList(std::string_view flag, std::string_view text);

// Runs the replay on this rank (under hvdrun); rank 0 prints the table and writes --json. Returns the
// process exit status; errors are printed as "hvdrun-bench: ..." lines.
int RunReplay(const ReplayOptions& options);

}  // namespace hvdrun

#endif  // HVDRUN_EXAMPLES_BENCH_GRADIENT_REPLAY_H_
