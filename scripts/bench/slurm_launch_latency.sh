#!/usr/bin/env bash
# Launch latency inside a Slurm allocation: the wall time of starting and finishing a trivial job
# of 8 ranks (`true`) on 4 Slurm nodes of the test cluster (hvdrun-test-cluster up 4 --slurm;
# docs/testing-cluster.md; as root), hvdrun against Open MPI's mpirun, both inside the same
# allocation (salloc -N 4 --ntasks-per-node=2, from the cluster's launcher namespace), interleaved
# round by round (the order alternates), after one warm-up run of each:
#   hvdrun true                                  agents through srun, one step per node
#   mpirun --allow-run-as-root -np 8 -bind-to none -map-by slot true     orted through srun
# Prints median, p10, p90 of each and the ratio of the medians (hvdrun / mpirun); asserts nothing
# about the times (the machine is shared: compare the ratio).
#
# Usage: scripts/bench/slurm_launch_latency.sh [--rounds N] [--build DIR]
#   --build DIR  a build tree with bin/hvdrun, bin/hvdrun-agent, bin/hvdrun-test-cluster (default build)
set -euo pipefail

# shellcheck source=scripts/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
rounds=20
inside=0  # --inside-allocation: the script's own second half, run by salloc
bench_parse_flags 2,13p rounds=rounds build=build inside-allocation=!inside -- "$@"
bench_whole_number --rounds "$rounds" 1
bench_build_with hvdrun hvdrun-agent hvdrun-test-cluster
mpirun="$(command -v mpirun)" || bench_die "no mpirun in PATH: install openmpi-bin"

if ((inside == 0)); then
  ((EUID == 0)) || bench_die "needs root (network namespaces)"
  command -v salloc >/dev/null || bench_die "no salloc in PATH: install slurm-client (scripts/install-deps.sh)"
  ready="$(mktemp -u)"
  bench_on_exit "rm -f \"$ready\""
  bench_cluster_up 4 --slurm --ready-file "$ready"
  slurm_conf="$(sed -n 's/^slurm_conf //p' "$ready")"
  ip netns exec "$run_id-launcher" env SLURM_CONF="$slurm_conf" \
    salloc --quiet -N 4 --ntasks-per-node=2 "$0" --inside-allocation --rounds "$rounds" --build "$build"
  exit 0
fi

hvdrun_cmd=("$build/bin/hvdrun" true)
mpirun_cmd=("$mpirun" --allow-run-as-root -np 8 -bind-to none -map-by slot true)

echo "Slurm job $SLURM_JOB_ID: nodes $SLURM_JOB_NODELIST, tasks per node $SLURM_TASKS_PER_NODE"
bench_compare_launches "$rounds"
echo "ratio of medians, hvdrun / mpirun: ${ratio}x ($rounds rounds, 4 Slurm nodes x 2 ranks)"
