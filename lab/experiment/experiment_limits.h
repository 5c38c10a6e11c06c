// The bounds an experiment keeps: checked when an experiment file is read (`run`, `validate`,
// `sbatch`, lab/experiment/experiment_parser.h and matrix.h), and again when `report` reads the
// experiment back from its results directory (lab/store/experiment_results.h), so that `report`
// accepts exactly what `run` can have written. Each bound is far above any lab's experiment; it is
// there so that a typo, or a damaged file, is refused with a line naming the limit instead of
// asking for millions of runs or processes.
#ifndef HVDRUN_LAB_EXPERIMENT_EXPERIMENT_LIMITS_H_
#define HVDRUN_LAB_EXPERIMENT_EXPERIMENT_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace hvdrun::lab {

// `repeats`: runs of each cell.
inline constexpr int kMaxRepeats = 1000;

// Cells of a matrix (combinations of its axes' values before `exclude`), and runs of an experiment
// (cells × repeats): `report` lists every run, made or not, in its tables.
inline constexpr size_t kMaxCombinations = 100000;
inline constexpr int64_t kMaxRuns = 100000;

// `timeout`, seconds per run: a week.
inline constexpr double kMaxTimeoutS = 7 * 24 * 3600;

// `figures.step_time_scale`: what multiplies the step-time figure into seconds.
inline constexpr double kMaxStepTimeScale = 1e9;

// Processes of a cell (np, processes_per_server, servers, and np = processes_per_server × servers):
// hvdrun's own -np limit.
inline constexpr int kMaxProcesses = 1 << 20;

// The program's --threads (the `threads` axis) and --batch-size (`batch_size`): hvdrun-trainer's
// ranges (examples/trainer/trainer_options.cc).
inline constexpr int kMaxThreads = 4096;
inline constexpr int64_t kMaxBatchSize = int64_t{1} << 20;

// `fusion_threshold`: HOROVOD_FUSION_THRESHOLD in bytes, as libhvdrun reads it (0 to 1 TiB,
// runtime/runtime_environment.cc).
inline constexpr int64_t kMaxFusionThresholdBytes = int64_t{1} << 40;

// The experiment file itself: its size, and how deeply its maps and lists may nest (an experiment
// needs four levels; yaml-cpp's own parser gives up, less clearly, at 500).
inline constexpr size_t kMaxExperimentFileBytes = size_t{1} << 20;
// The hostfile it names (one line per host: a million hosts fit).
inline constexpr size_t kMaxHostfileBytes = size_t{64} << 20;
inline constexpr int kMaxYamlDepth = 32;

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_EXPERIMENT_EXPERIMENT_LIMITS_H_
