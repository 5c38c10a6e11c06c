// Matrix: the cells of an experiment — every combination of its axes' values that no `exclude`
// entry removes — and the hvdrun command line of each.
//
// A cell with `np: N, servers: S` (or `processes_per_server: N/S, servers: S`) runs N/S processes
// on each of the first S hosts of the experiment (hvdrun -H host1:N/S,...,hostS:N/S), so that every
// server gets the same share. A cell with backend nccl, or device cuda..., needs a GPU per process.
// Expansion fails, with the experiment file's line and column of the value at fault, on a cell that
// can never run: more servers than hosts, np not a multiple of servers, more processes on a host
// than its slots, more GPUs per server than the declared gpus_per_server. A cell that could run,
// but not on this machine (a GPU cell without enough GPUs here), is kept with a skip reason.
//
// Inside a Slurm allocation (MachineFacts::slurm), the allocation's nodes take the place of the
// experiment's hosts: a cell with `servers: S` uses the first S nodes, with the node's tasks
// (SLURM_TASKS_PER_NODE) as its slots, and hvdrun starts its agents there with srun
// (--launcher slurm -H node1:P,...). A cell that needs more nodes, or more tasks on a node, than
// the allocation has fails expansion, naming the cell's value and the allocation.
#ifndef HVDRUN_LAB_EXPERIMENT_MATRIX_H_
#define HVDRUN_LAB_EXPERIMENT_MATRIX_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/placement/host_spec.h"
#include "common/placement/slurm_allocation.h"
#include "hvdrun/status.h"
#include "lab/experiment/experiment_config.h"

namespace hvdrun::lab {

// What the machine hvdrun-lab runs on offers the cells (lab/host_facts.h finds it).
struct MachineFacts {
  int gpus = 0;
  std::string gpus_source;  // how `gpus` was found, for skip reasons ("no /dev/nvidia0")
  // The Slurm allocation the cells run in (hvdrun-lab run --slurm, or inside one for an experiment
  // that names no hosts); nullopt: the experiment's hosts, reached as hvdrun reaches them.
  std::optional<SlurmAllocation> slurm;
};

struct Cell {
  // Names the cell's directory: every axis as name-value, joined by '_' ("backend-gloo_np-2_servers-1").
  std::string id;
  std::vector<std::pair<std::string, std::string>> values;  // every axis, in the experiment's order
  std::string backend;
  int num_proc = 1;
  int servers = 1;
  int procs_per_server = 1;
  std::vector<HostSlots> hosts;           // hvdrun's -H
  std::vector<std::string> program_args;  // the experiment's args, then the flag axes'
  std::vector<std::string> env;           // NAME=VALUE: the experiment's env, then the env axes'
  // hvdrun's own flags: the experiment's `hvdrun` section's, then those the axes set (fusion).
  std::vector<std::string> hvdrun_args;
  std::string skip_reason;  // not empty: this machine cannot run the cell
};

struct Matrix {
  std::vector<Cell> cells;  // in odometer order: the experiment's first axis changes slowest
  int excluded = 0;         // combinations removed by `exclude`
  // The Slurm allocation the cells were placed on (MachineFacts::slurm); nullopt: the experiment's hosts.
  std::optional<SlurmAllocation> slurm;
};

StatusOr<Matrix> ExpandMatrix(const ExperimentConfig& config, const MachineFacts& machine);

// "backend=gloo np=2 servers=1 model=resnet50": the cell's values, for messages and reports.
std::string DescribeCell(const Cell& cell);

// The value of axis `name` in `cell`; empty when the cell has no such axis.
std::string CellValue(const Cell& cell, const std::string& name);

// hvdrun's arguments (without hvdrun itself) for one run of `cell`: placement, backend, exported
// variables, the axes' hvdrun flags, `--results results_dir --output-filename logs_dir`, then `--`
// and the program's argv.
std::vector<std::string> HvdrunArguments(const Cell& cell, const std::string& program,
                                         const std::string& results_dir, const std::string& logs_dir);

// `text` made fit for a file name: letters, digits, '.' and '+' kept, anything else '-'; "x" when empty.
std::string SlugForFileName(std::string_view text);

// The program a cell runs: a name with a '/' is taken relative to the experiment file's directory;
// a bare name is the program of that name installed beside hvdrun-lab (`self_dir`) when there is
// one there, and otherwise left for PATH.
std::string ResolveProgram(const ExperimentConfig& config, const std::string& self_dir);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_EXPERIMENT_MATRIX_H_
