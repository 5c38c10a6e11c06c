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

die() {
  echo "slurm_launch_latency.sh: $*" >&2
  exit 2
}

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rounds=20
build="$repo_root/build"
inside=0
while (($# > 0)); do
  case "$1" in
    --rounds) (($# >= 2)) || die "--rounds needs a value"; rounds="$2"; shift 2 ;;
    --build) (($# >= 2)) || die "--build needs a value"; build="$2"; shift 2 ;;
    --inside-allocation) inside=1; shift ;;  # the script's own second half, run by salloc
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
if ! [[ "$rounds" =~ ^[0-9]+$ ]] || ((rounds < 1)); then
  die "--rounds: expected a whole number >= 1, got '$rounds'"
fi
build="$(cd "$build" 2>/dev/null && pwd)" || die "--build: no such directory"
for program in hvdrun hvdrun-agent hvdrun-test-cluster; do
  [[ -x "$build/bin/$program" ]] || die "no $build/bin/$program: build it, or pass --build DIR"
done
mpirun="$(command -v mpirun)" || die "no mpirun in PATH: install openmpi-bin"

if ((inside == 0)); then
  ((EUID == 0)) || die "needs root (network namespaces)"
  command -v salloc >/dev/null || die "no salloc in PATH: install slurm-client (scripts/install-deps.sh)"
  ready="$(mktemp -u)"
  log="$(mktemp)"
  "$build/bin/hvdrun-test-cluster" up 4 --slurm --ready-file "$ready" >"$log" 2>&1 &
  cluster_pid=$!
  trap 'kill -INT "$cluster_pid" 2>/dev/null || true; wait "$cluster_pid" 2>/dev/null || true; rm -f "$log" "$ready"' EXIT
  for ((i = 0; i < 600; ++i)); do
    [[ -f "$ready" ]] && break
    kill -0 "$cluster_pid" 2>/dev/null || { cat "$log" >&2; die "the test cluster did not start"; }
    sleep 0.1
  done
  [[ -f "$ready" ]] || { cat "$log" >&2; die "the test cluster was not ready within 60 s"; }
  run_id="$(sed -n 's/^run_id //p' "$ready")"
  slurm_conf="$(sed -n 's/^slurm_conf //p' "$ready")"
  ip netns exec "$run_id-launcher" env SLURM_CONF="$slurm_conf" \
    salloc --quiet -N 4 --ntasks-per-node=2 "$0" --inside-allocation --rounds "$rounds" --build "$build"
  exit 0
fi

err_log="$(mktemp)"
trap 'rm -f "$err_log"' EXIT
hvdrun_cmd=("$build/bin/hvdrun" true)
mpirun_cmd=("$mpirun" --allow-run-as-root -np 8 -bind-to none -map-by slot true)

now_us() {
  local t="${EPOCHREALTIME//[!0-9]/}"
  echo "$((10#$t))"
}
time_us() {
  local start end
  start="$(now_us)"
  if ! "$@" >/dev/null 2>"$err_log"; then
    echo "slurm_launch_latency.sh: '$*' failed:" >&2
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

echo "Slurm job $SLURM_JOB_ID: nodes $SLURM_JOB_NODELIST, tasks per node $SLURM_TASKS_PER_NODE"
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
printf 'ratio of medians, hvdrun / mpirun: %d.%02dx (%d rounds, 4 Slurm nodes x 2 ranks)\n' \
  "$((ratio_x100 / 100))" "$((ratio_x100 % 100))" "$rounds"
