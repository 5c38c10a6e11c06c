// SlurmAllocation: the nodes, task slots and task count of the Slurm job hvdrun runs inside, read
// from the variables salloc, sbatch and srun set (SLURM_JOB_ID, SLURM_JOB_NODELIST,
// SLURM_TASKS_PER_NODE, SLURM_NTASKS), as Open MPI's ras/slurm module reads them.
//
// Two compressed forms are expanded here, both as Slurm writes them (sbatch(1), scontrol(1)):
//   - host lists: `node[01-04,07],gpu-a[1-2],login1` is node01 node02 node03 node04 node07 gpu-a1
//     gpu-a2 login1. A bracket holds numbers and ranges N-M (N <= M), comma-separated; a range keeps
//     the width of its low end's text (`[08-10]` is 08 09 10, `[9-11]` is 9 10 11). Several bracket
//     groups in one name are a product, the first varying slowest: `r[1-2]-n[01-02]` is r1-n01
//     r1-n02 r2-n01 r2-n02, the order of `scontrol show hostnames`.
//   - tasks per node: `2(x3),1` is 2 2 2 1.
// Pure and thread-safe. Errors are one line naming the variable and the text at fault.
#ifndef HVDRUN_COMMON_PLACEMENT_SLURM_ALLOCATION_H_
#define HVDRUN_COMMON_PLACEMENT_SLURM_ALLOCATION_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/placement/host_spec.h"
#include "hvdrun/status.h"

namespace hvdrun {

struct SlurmAllocation {
  std::string job_id;          // SLURM_JOB_ID
  std::string node_list;       // SLURM_JOB_NODELIST as Slurm wrote it, for messages
  std::string tasks_per_node;  // SLURM_TASKS_PER_NODE as Slurm wrote it, for messages
  // Every node of the allocation in Slurm's order, each with its task slots.
  std::vector<HostSlots> nodes;
  // SLURM_NTASKS; when Slurm did not set it (salloc -N without -n), the sum of the slots.
  int num_tasks = 0;
};

// Expands a Slurm host list. Errors name the entry and what is wrong with it, without the variable.
StatusOr<std::vector<std::string>> ExpandSlurmHostList(std::string_view text);

// Expands SLURM_TASKS_PER_NODE's `N(xK)` form. Errors as ExpandSlurmHostList's.
StatusOr<std::vector<int>> ExpandSlurmTasksPerNode(std::string_view text);

// The allocation described by the variables `getenv` returns; nullopt when SLURM_JOB_ID is not set
// (not inside an allocation). SLURM_NODELIST and SLURM_NPROCS stand in for SLURM_JOB_NODELIST and
// SLURM_NTASKS when only they are set (older Slurm). Fails when a variable is missing or malformed,
// or when the node list and the tasks per node disagree in length.
StatusOr<std::optional<SlurmAllocation>> ReadSlurmAllocation(
    const std::function<const char*(const char*)>& getenv);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PLACEMENT_SLURM_ALLOCATION_H_
