#!/usr/bin/env bash
# Launch latency over SSH: the wall time of starting and finishing a trivial job of 4 hosts x 2
# ranks on the test cluster (docs/testing-cluster.md; as root), hvdrun against Open MPI's mpirun
# with its own ssh launcher, on the same namespace hosts, interleaved round by round (the order
# alternates), after one warm-up run of each. Both run in the cluster's launcher namespace:
#   hvdrun -np 8 -H server1:2,...,server4:2 -i KEY --ssh-known-hosts KH --agent-path AGENT true
#   mpirun --allow-run-as-root -np 8 -H server1:2,... -mca plm_rsh_agent "ssh -F <ssh_config>" true
# Prints median, p10, p90 of each and the ratio of the medians (hvdrun / mpirun); asserts nothing
# about the times (the machine is shared: compare the ratio).
#
# Usage: scripts/bench/cluster_launch_latency.sh [--rounds N] [--build DIR]
#   --build DIR  a build tree with bin/hvdrun, bin/hvdrun-agent, bin/hvdrun-test-cluster (default build)
set -euo pipefail

# shellcheck source=scripts/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
rounds=20
bench_parse_flags 2,12p rounds=rounds build=build -- "$@"
bench_whole_number --rounds "$rounds" 1
bench_build_with hvdrun hvdrun-agent hvdrun-test-cluster
mpirun="$(command -v mpirun)" || bench_die "no mpirun in PATH: install openmpi-bin"
((EUID == 0)) || bench_die "needs root (network namespaces)"

bench_cluster_up 4
hosts="server1:2,server2:2,server3:2,server4:2"

bench_cluster_hvdrun hvdrun_cmd "$build/bin" 8 "$hosts" true
# shellcheck disable=SC2054  # "self,tcp" is one argument
mpirun_cmd=(ip netns exec "$run_id-launcher" "$mpirun" --allow-run-as-root -np 8 -H "$hosts"
  -mca plm_rsh_agent "ssh -F $run_dir/ssh_config" -mca btl self,tcp true)

bench_compare_launches "$rounds"
echo "ratio of medians, hvdrun / mpirun: ${ratio}x ($rounds rounds, 4 hosts x 2 ranks)"
