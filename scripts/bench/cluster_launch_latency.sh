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

die() {
  echo "cluster_launch_latency.sh: $*" >&2
  exit 2
}

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rounds=20
build="$repo_root/build"
while (($# > 0)); do
  case "$1" in
    --rounds) (($# >= 2)) || die "--rounds needs a value"; rounds="$2"; shift 2 ;;
    --build) (($# >= 2)) || die "--build needs a value"; build="$2"; shift 2 ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ "$rounds" =~ ^[0-9]+$ ]] && ((rounds >= 1)) || die "--rounds: expected a whole number >= 1, got '$rounds'"
build="$(cd "$build" 2>/dev/null && pwd)" || die "--build: no such directory"
for program in hvdrun hvdrun-agent hvdrun-test-cluster; do
  [[ -x "$build/bin/$program" ]] || die "no $build/bin/$program: build it, or pass --build DIR"
done
mpirun="$(command -v mpirun)" || die "no mpirun in PATH: install openmpi-bin"
((EUID == 0)) || die "needs root (network namespaces)"

log="$(mktemp)"
err_log="$(mktemp)"
"$build/bin/hvdrun-test-cluster" up 4 >"$log" 2>&1 &
cluster_pid=$!
cleanup() {
  kill -INT "$cluster_pid" 2>/dev/null || true
  wait "$cluster_pid" 2>/dev/null || true
  rm -f "$log" "$err_log"
}
trap cleanup EXIT
for ((i = 0; i < 300; ++i)); do
  grep -q '^Ctrl-C' "$log" && break
  kill -0 "$cluster_pid" 2>/dev/null || { cat "$log" >&2; die "the test cluster did not start"; }
  sleep 0.1
done
run_id="$(sed -n 's/^hvdrun test cluster \([^:]*\):.*/\1/p' "$log")"
[[ -n "$run_id" ]] || { cat "$log" >&2; die "the test cluster did not say its run id"; }
run_dir="/run/hvdrun-cluster/$run_id"
in_launcher=(ip netns exec "$run_id-launcher")
hosts="server1:2,server2:2,server3:2,server4:2"

hvdrun_cmd=("${in_launcher[@]}" "$build/bin/hvdrun" -np 8 -H "$hosts" -i "$run_dir/id_ed25519"
  --ssh-known-hosts "$run_dir/known_hosts" --agent-path "$build/bin/hvdrun-agent" true)
mpirun_cmd=("${in_launcher[@]}" "$mpirun" --allow-run-as-root -np 8 -H "$hosts"
  -mca plm_rsh_agent "ssh -F $run_dir/ssh_config" -mca btl self,tcp true)

now_us() {
  local t="${EPOCHREALTIME//[!0-9]/}"
  echo "$((10#$t))"
}
time_us() {
  local start end
  start="$(now_us)"
  if ! "$@" >/dev/null 2>"$err_log"; then
    echo "cluster_launch_latency.sh: '$*' failed:" >&2
    cat "$err_log" >&2
    exit 1
  fi
  end="$(now_us)"
  echo "$((end - start))"
}
percentile() {  # p, then sorted values; nearest rank below, interpolated
  local p="$1"
  shift
  local -a v=("$@")
  local n=${#v[@]} scaled i frac
  scaled=$((p * (n - 1)))
  i=$((scaled / 100))
  frac=$((scaled % 100))
  if ((i + 1 >= n)); then echo "${v[n - 1]}"; else echo "$(((v[i] * (100 - frac) + v[i + 1] * frac + 50) / 100))"; fi
}
ms() { printf '%d.%d' "$((($1 + 50) / 1000))" "$(((($1 + 50) % 1000) / 100))"; }

echo "hvdrun: ${hvdrun_cmd[*]}"
echo "mpirun: ${mpirun_cmd[*]}"
echo "warm-up, then $rounds rounds (order alternates each round)..."
time_us "${hvdrun_cmd[@]}" >/dev/null
time_us "${mpirun_cmd[@]}" >/dev/null
hv=()
mpi=()
for ((round = 0; round < rounds; ++round)); do
  if ((round % 2 == 0)); then
    hv+=("$(time_us "${hvdrun_cmd[@]}")")
    mpi+=("$(time_us "${mpirun_cmd[@]}")")
  else
    mpi+=("$(time_us "${mpirun_cmd[@]}")")
    hv+=("$(time_us "${hvdrun_cmd[@]}")")
  fi
done
mapfile -t hv_sorted < <(printf '%s\n' "${hv[@]}" | sort -n)
mapfile -t mpi_sorted < <(printf '%s\n' "${mpi[@]}" | sort -n)
hv50="$(percentile 50 "${hv_sorted[@]}")"
mpi50="$(percentile 50 "${mpi_sorted[@]}")"
ratio_x100=$(((hv50 * 100 + mpi50 / 2) / mpi50))
echo
printf '%-8s %10s %10s %10s\n' "" "median ms" "p10 ms" "p90 ms"
printf '%-8s %10s %10s %10s\n' hvdrun "$(ms "$hv50")" "$(ms "$(percentile 10 "${hv_sorted[@]}")")" \
  "$(ms "$(percentile 90 "${hv_sorted[@]}")")"
printf '%-8s %10s %10s %10s\n' mpirun "$(ms "$mpi50")" "$(ms "$(percentile 10 "${mpi_sorted[@]}")")" \
  "$(ms "$(percentile 90 "${mpi_sorted[@]}")")"
printf 'ratio of medians, hvdrun / mpirun: %d.%02dx (%d rounds, 4 hosts x 2 ranks)\n' \
  "$((ratio_x100 / 100))" "$((ratio_x100 % 100))" "$rounds"
