// hvdrun-lab and Slurm: which allocation an experiment's cells run in, and the sbatch script that
// submits an experiment as one job (docs/lab.md, "Under Slurm").
//
// The rule follows hvdrun's own (README, "Inside a Slurm allocation"): inside an allocation
// (SLURM_JOB_ID set), an experiment that names no hosts runs on the allocation's nodes; one that
// names hosts runs on them, reached as hvdrun reaches them, unless `--slurm` asks for the
// allocation. `--slurm` outside an allocation is an error. The cells then use the first S nodes of
// the allocation (lab/experiment/matrix.h).
//
// Pure: the environment comes through `getenv`. Errors are one line naming the flag or variable.
#ifndef HVDRUN_LAB_RUN_SLURM_JOB_H_
#define HVDRUN_LAB_RUN_SLURM_JOB_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/placement/slurm_allocation.h"
#include "hvdrun/status.h"
#include "lab/experiment/experiment_config.h"
#include "lab/experiment/matrix.h"

namespace hvdrun::lab {

// The allocation the cells of `config` run in, or nullopt for the experiment's hosts.
// `slurm_flag`: `--slurm` was given.
StatusOr<std::optional<SlurmAllocation>> ChooseSlurmAllocation(
    const ExperimentConfig& config, bool slurm_flag, const std::function<const char*(const char*)>& getenv);

// An allocation as large as any cell of `config` could ask for (nodes named node1..), so that the
// matrix can be expanded for a job not yet submitted (hvdrun-lab sbatch).
SlurmAllocation AllocationForSubmission(const ExperimentConfig& config);

// What the sbatch script asks Slurm for and runs.
struct SbatchOptions {
  std::string lab_path;         // hvdrun-lab, absolute
  std::string experiment_path;  // absolute
  std::string results;          // `run --results`, absolute
  std::string time_limit;       // --time, Slurm's format ("30", "1:30:00", "1-00:00:00"); empty: none
  std::string output;           // --output; empty: "<name>-%j.out" in the directory sbatch runs in
  std::string partition;        // --partition; empty: the cluster's default
  bool force = false;           // `run --force`
};

// Checks a --time value as Slurm takes it: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS
// (each field digits). The error names the value.
Status CheckSlurmTimeLimit(const std::string& text);

// `value` as sbatch reads an #SBATCH line's value back (Slurm's sbatch/opt.c): unchanged when it
// holds only letters, digits and `_-+=/.,:@%`, otherwise in double quotes, with '"' and '\'
// escaped by a '\'. The value must hold no control character (a line break ends the line).
std::string SbatchDirectiveQuote(std::string_view value);

// The script: `#!/bin/sh`, #SBATCH lines for the job's name, nodes (the most servers of any cell),
// tasks per node (the most processes per server of any cell), time, output and partition (each
// value quoted by SbatchDirectiveQuote), a comment naming the experiment file, then
// `exec hvdrun-lab run EXPERIMENT --slurm --results RESULTS` with every word quoted for sh
// (common/shell_words.h), so that no value, whatever it holds, adds a line or a command of its own.
// `matrix` is the experiment expanded against AllocationForSubmission(config); skipped cells
// count, since the nodes may have what this machine lacks. Errors: --output, --partition or --time
// holds a control character, which an #SBATCH line cannot hold (the message names the flag).
StatusOr<std::string> BuildSbatchScript(const ExperimentConfig& config, const Matrix& matrix,
                                        const SbatchOptions& options);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_RUN_SLURM_JOB_H_
